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

    /// A fault; with no arguments it does nothing.
    public init(
        status: Int? = nil, retryAfter: String? = nil, delay: Double = 0, dropConnection: Bool = false,
        afterInsert: Bool = false, path: String? = nil, location: String? = nil
    ) {
        self.status = status
        self.retryAfter = retryAfter
        self.delay = delay
        self.dropConnection = dropConnection
        self.afterInsert = afterInsert
        self.path = path
        self.location = location
    }

    /// From the admin endpoint's JSON: `{"status":503,"retry_after":"2","delay_ms":100,"drop_connection":true,
    /// "after_insert":true,"path":"/track"}`.
    init?(json: JSONValue) {
        guard json.objectValue != nil else { return nil }
        status = json["status"]?.intValue
        retryAfter = json["retry_after"]?.stringValue ?? json["retry_after"]?.intValue.map(String.init)
        delay = (json["delay_ms"]?.doubleValue ?? 0) / 1000
        dropConnection = json["drop_connection"] == .bool(true)
        afterInsert = json["after_insert"] == .bool(true)
        path = json["path"]?.stringValue
        location = json["location"]?.stringValue
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
        return .object(object)
    }
}

/// The queue of faults still to apply, consumed one per matching request.
final class FaultInjector: @unchecked Sendable {
    private let lock = NSLock()
    private var faults: [Fault] = []
    private var appliedCount = 0
    private let sleeper = NSCondition()
    private var cancelled = false
    private var delaying = 0

    func add(_ fault: Fault, count: Int) {
        lock.withLock { faults.append(contentsOf: Array(repeating: fault, count: max(0, count))) }
    }

    func clear() { lock.withLock { faults.removeAll() } }

    var pending: [Fault] { lock.withLock { faults } }

    var applied: Int { lock.withLock { appliedCount } }

    /// Waits `seconds`, or less when `cancelDelays` is called (so stopping never waits for an injected delay).
    func delay(_ seconds: Double) {
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
    func next(for path: String) -> Fault? {
        lock.withLock {
            guard let index = faults.firstIndex(where: { $0.path == nil || $0.path == path }) else {
                return nil
            }
            appliedCount += 1
            return faults.remove(at: index)
        }
    }
}
