import Foundation

/// The server-wide memory budget for request bodies being inflated and parsed at once, so memory follows what
/// the collector keeps rather than what clients send: a body is measured first (`JSONShape`, nothing built), its
/// tree's cost estimated (`cost(of:)`) and taken from the budget before it is parsed. A body whose tree alone
/// exceeds the whole budget is refused (413); one that finds the budget taken waits up to `wait` seconds, then is
/// answered 503 with `Retry-After` (the client retries). Compressed bodies reserve the largest inflated size
/// before inflating.
package final class ParseBudget: @unchecked Sendable {
    /// Bytes of trees and inflated bodies at once.
    package let capacity: Int
    /// Seconds a request waits for room before it is answered 503.
    let wait: Double
    private let condition = NSCondition()
    private var used = 0

    /// Estimated bytes a parsed value costs (`CohorlyValue` in its container, a dictionary slot, a small string):
    /// measured with 10 MiB documents of tiny objects and arrays (scripts/bench-serve-memory).
    static let bytesPerValue = 96

    package init(capacity: Int, wait: Double = 2) {
        self.capacity = capacity
        self.wait = wait
    }

    /// What parsing a document of `shape` (`bytes` long) holds: its values, and its text again in strings.
    package static func cost(of shape: JSONShape, bytes: Int) -> Int {
        let (values, overflow) = shape.values.multipliedReportingOverflow(by: bytesPerValue)
        return overflow ? Int.max : values &+ bytes
    }

    /// Bytes taken now (tests, benchmarks).
    var inUse: Int { condition.withLock { used } }

    /// Changes what the caller holds from `held` to `wanted` bytes, waiting for room when it grows; false (the
    /// caller still holds `held`) when `wanted` is over the capacity or no room came within `wait` seconds.
    package func resize(from held: Int, to wanted: Int) -> Bool {
        guard wanted <= capacity else { return false }
        let deadline = Date(timeIntervalSinceNow: wait)
        condition.lock()
        defer { condition.unlock() }
        while used - held + wanted > capacity {
            guard condition.wait(until: deadline) else { return false }
        }
        used += wanted - held
        if wanted < held { condition.broadcast() }
        return true
    }

    /// Takes `bytes` (`resize(from: 0, to: bytes)`).
    func acquire(_ bytes: Int) -> Bool { resize(from: 0, to: bytes) }

    /// The 413 reason for a body of `values` values.
    package func tooLargeReason(values: Int) -> String {
        "too many JSON values (\(values)): parsed, the body would take more than the collector's parse budget of "
            + "\(capacity) bytes"
    }

    /// The 503 reason.
    package static let busyReason = "busy: the collector's parse budget is taken by other requests; retry"

    /// Gives back `bytes`.
    package func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        condition.lock()
        used -= bytes
        condition.broadcast()
        condition.unlock()
    }
}

/// Why a body was not parsed under the budget.
package enum BudgetedParseFailure: Error {
    /// Not JSON.
    case invalid
    /// Its tree would take more than the whole budget (`values` values).
    case tooLarge(values: Int)
    /// No room within the wait.
    case busy
}

extension ParseBudget {
    /// Parses `body` under the budget, `held` bytes already taken for it (an inflated body); `parse` runs with the
    /// tree's cost held, which is given back when it returns (with `held`).
    package func parse<T>(_ body: [UInt8], holding held: Int = 0, _ use: (JSONValue) -> T) -> Result<
        T, BudgetedParseFailure
    > {
        var holding = held
        defer { release(holding) }
        guard let shape = JSONShape.measure(body) else { return .failure(.invalid) }
        let wanted = held + Self.cost(of: shape, bytes: body.count)
        guard wanted <= capacity else { return .failure(.tooLarge(values: shape.values)) }
        guard resize(from: held, to: wanted) else { return .failure(.busy) }
        holding = wanted
        guard let document = JSONValue(bytes: body) else { return .failure(.invalid) }
        return .success(use(document))
    }
}

/// Why a body was not inflated under the budget.
package enum BudgetedInflateFailure: Error {
    /// zlib's (or the encoding's) reason.
    case decode(BodyDecodeFailure)
    /// No room within the wait.
    case busy
}

extension ParseBudget {
    /// `request`'s body, inflated (`HTTPRequest.decodedBody(limit:)`) with `limit` bytes taken from the budget
    /// first, and what it then holds: the inflated size (0 for a body sent uncompressed, already counted as
    /// received). The caller gives `held` back (`parse(_:holding:_:)` does).
    package func inflate(_ request: HTTPRequest, limit: Int) -> Result<
        (body: [UInt8], held: Int), BudgetedInflateFailure
    > {
        let encoding = request.header("Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let compressed = !(encoding.isEmpty || encoding == "identity")
        if compressed, !acquire(limit) { return .failure(.busy) }
        switch request.decodedBody(limit: limit) {
        case .success(let body):
            guard compressed else { return .success((body, 0)) }
            _ = resize(from: limit, to: body.count)
            return .success((body, body.count))
        case .failure(let failure):
            if compressed { release(limit) }
            return .failure(.decode(failure))
        }
    }
}
