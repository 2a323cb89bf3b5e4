import Foundation

/// A scripted misbehaviour for the next answers of the ingestion endpoints.
public struct Fault: Sendable, Equatable {
    /// Answer with this status (with `{"status":0,"error":"injected fault"}`) instead of the real answer.
    public var status: Int?
    /// `Retry-After` header value sent with `status`.
    public var retryAfter: String?
    /// Seconds to wait before answering. Default 0.
    public var delay: Double = 0
    /// Close the connection without any answer. Default false.
    public var dropConnection: Bool = false
    /// Process (store) the request first, then misbehave: a lost acknowledgement. Default false.
    public var afterInsert: Bool = false
    /// Only for this path (e.g. `/track`); nil for any ingestion endpoint.
    public var path: String?
    /// `Location` header sent with `status` (a redirect, e.g. `307` to `/track?hop=1`).
    public var location: String?
    /// The value of the rate-limit header of the wire that answers, for a wire that has one (Sentry's envelope
    /// route sends it as `X-Sentry-Rate-Limits`, e.g. `60:error:project`), with `status` or (without one) on its real
    /// answer. Nil: none.
    public var rateLimits: String?

    /// The former name of ``rateLimits``.
    @available(*, deprecated, renamed: "rateLimits")
    public var sentryRateLimits: String? {
        get { rateLimits }
        set { rateLimits = newValue }
    }

    /// A fault; with no arguments it does nothing.
    public init(
        status: Int? = nil, retryAfter: String? = nil, delay: Double = 0, dropConnection: Bool = false,
        afterInsert: Bool = false, path: String? = nil, location: String? = nil, rateLimits: String? = nil
    ) {
        self.rateLimits = rateLimits
        self.status = status
        self.retryAfter = retryAfter
        self.delay = delay
        self.dropConnection = dropConnection
        self.afterInsert = afterInsert
        self.path = path
        self.location = location
    }

    /// The former spelling of ``init(status:retryAfter:delay:dropConnection:afterInsert:path:location:rateLimits:)``.
    @available(
        *, deprecated, renamed: "init(status:retryAfter:delay:dropConnection:afterInsert:path:location:rateLimits:)"
    )
    public init(
        status: Int? = nil, retryAfter: String? = nil, delay: Double = 0, dropConnection: Bool = false,
        afterInsert: Bool = false, path: String? = nil, location: String? = nil, sentryRateLimits: String?
    ) {
        self.init(
            status: status, retryAfter: retryAfter, delay: delay, dropConnection: dropConnection,
            afterInsert: afterInsert, path: path, location: location, rateLimits: sentryRateLimits)
    }

    /// From the admin endpoint's JSON: `{"status":503,"retry_after":"2","delay_ms":100,"drop_connection":true,
    /// "after_insert":true,"path":"/track","rate_limits":"60:error:project"}` (`rate_limits` also read under its
    /// former name, `sentry_rate_limits`).
    init?(json: JSONValue) {
        guard json.objectValue != nil else { return nil }
        status = json["status"]?.intValue
        retryAfter = json["retry_after"]?.stringValue ?? json["retry_after"]?.intValue.map(String.init)
        delay = (json["delay_ms"]?.doubleValue ?? 0) / 1000
        dropConnection = json["drop_connection"] == .bool(true)
        afterInsert = json["after_insert"] == .bool(true)
        path = json["path"]?.stringValue
        location = json["location"]?.stringValue
        rateLimits = (json["rate_limits"] ?? json[Self.formerRateLimitsKey])?.stringValue
    }

    /// From the admin endpoint's JSON, every field range-checked: `status` 100…599, `delay_ms` 0…600,000,
    /// `retry_after`, `location` and `rate_limits` at most 2,048 characters without control characters.
    init(validating json: JSONValue) throws(BadRequest) {
        guard let fault = Fault(json: json) else { throw BadRequest(message: "expected a JSON object") }
        if let status = json["status"], status != .null {
            guard let code = status.intValue, (100...599).contains(code) else {
                throw BadRequest(message: "invalid status \(status.jsonString.prefix(40)): expected 100 to 599")
            }
        }
        if let delay = json["delay_ms"], delay != .null {
            guard let milliseconds = delay.doubleValue, milliseconds.isFinite, (0...600_000).contains(milliseconds)
            else { throw BadRequest(message: "invalid delay_ms \(delay.jsonString.prefix(40)): expected 0 to 600000") }
        }
        for text in [fault.retryAfter, fault.location, fault.rateLimits].compactMap({ $0 }) {
            guard text.utf8.count <= 2048, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else {
                throw BadRequest(
                    message: "invalid retry_after, location or rate_limits: too long or control characters")
            }
        }
        self = fault
    }

    /// The admin endpoint's `count`: 1 when absent, else 1…`FaultInjector.maximumPending`.
    static func count(_ json: JSONValue) throws(BadRequest) -> Int {
        guard let value = json["count"], value != .null else { return 1 }
        guard let count = value.intValue, (1...FaultInjector.maximumPending).contains(count) else {
            throw BadRequest(
                message: "invalid count \(value.jsonString.prefix(40)): expected 1 to \(FaultInjector.maximumPending)")
        }
        return count
    }

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "delay_ms": .double(delay * 1000), "drop_connection": .bool(dropConnection),
            "after_insert": .bool(afterInsert),
        ]
        if let status { object["status"] = .int(status) }
        if let retryAfter { object["retry_after"] = .string(retryAfter) }
        if let path { object["path"] = .string(path) }
        if let location { object["location"] = .string(location) }
        if let rateLimits { object["rate_limits"] = .string(rateLimits) }
        return .object(object)
    }

    /// What the admin endpoint called `rate_limits` before it was named for any wire.
    private static let formerRateLimitsKey = "sentry_rate_limits"

}

/// The queue of faults still to apply, consumed one per matching request.
package final class FaultInjector: @unchecked Sendable {
    private let lock = NSLock()
    private var faults: [Fault] = []
    private var appliedCount = 0
    private let sleeper = NSCondition()
    private var cancelled = false
    private var delaying = 0

    /// Most faults waiting at once: 10,000.
    static let maximumPending = 10_000

    /// Queues `count` copies of `fault`; false (and nothing queued) when that would pass `maximumPending`.
    @discardableResult
    func add(_ fault: Fault, count: Int) -> Bool {
        lock.withLock {
            guard count >= 0, count <= Self.maximumPending - faults.count else { return false }
            faults.append(contentsOf: repeatElement(fault, count: count))
            return true
        }
    }

    func clear() { lock.withLock { faults.removeAll() } }

    var pending: [Fault] { lock.withLock { faults } }

    var applied: Int { lock.withLock { appliedCount } }

    /// Waits `seconds`, or less when `cancelDelays` is called (so stopping never waits for an injected delay).
    package func delay(_ seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        let deadline = Date(timeIntervalSinceNow: seconds)
        sleeper.lock()
        delaying += 1
        while !cancelled, sleeper.wait(until: deadline) {}
        delaying -= 1
        sleeper.unlock()
    }

    /// Requests currently held by an injected delay.
    var delayingCount: Int {
        sleeper.lock()
        defer { sleeper.unlock() }
        return delaying
    }

    /// Ends every injected delay now and skips later ones.
    func cancelDelays() {
        sleeper.lock()
        cancelled = true
        sleeper.broadcast()
        sleeper.unlock()
    }

    /// The next fault for `path`, removed from the queue.
    package func next(for path: String) -> Fault? {
        lock.withLock {
            guard let index = faults.firstIndex(where: { $0.path == nil || $0.path == path }) else {
                return nil
            }
            appliedCount += 1
            return faults.remove(at: index)
        }
    }
}
