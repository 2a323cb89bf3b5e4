/// The endpoint a queued record goes to (stored with it, so a detached sender knows where it belongs).
enum Endpoint: String, Sendable {
    /// `POST /track`: events, batched up to 500.
    case track
    /// `POST /engage`: profile operations, batched up to 500.
    case engage
    /// `POST /alias`: one object per request, sent once (best effort).
    case alias
    /// PostHog capture V1 `POST /i/v1/analytics/events`: batch items, per-event results.
    case capture = "i/v1/analytics/events"

    var path: String { "/" + rawValue }
}

/// One change to the persisted state, applied in order by the store.
enum QueueOperation: Sendable {
    /// Appends a record (`prepared` marks fully formed events such as crashes, which `reset()` keeps).
    case append(Endpoint, insertId: String?, json: String, prepared: Bool)
    /// Sets (or with nil removes) a persisted setting: identity, super properties, opt-out.
    case setMeta(String, String?)
    /// Removes queued records; `keepPrepared` keeps prepared events.
    case clear(keepPrepared: Bool)
}

/// Queued records to send in one request: same endpoint, oldest first, no repeated `$insert_id`.
struct QueueBatch: Sendable {
    var endpoint: Endpoint
    var ids: [Int64]
    var records: [String]
    /// Each record's dedupe key (`$insert_id` or PostHog uuid), nil where it has none.
    var insertIds: [String?] = []

    /// The dedupe key of record `index` (nil when it has none).
    func insertId(at index: Int) -> String? { insertIds.indices.contains(index) ? insertIds[index] : nil }

    /// `records` joined into one JSON array's text, between `prefix` and `suffix`.
    func joined(prefix: String = "[", suffix: String = "]") -> [UInt8] {
        var text = prefix
        text.reserveCapacity(records.reduce(prefix.utf8.count + suffix.utf8.count) { $0 + $1.utf8.count + 1 })
        for (index, record) in records.enumerated() {
            if index > 0 { text += "," }
            text += record
        }
        text += suffix
        return Array(text.utf8)
    }
}

/// The seam for the persisted queue. Contract: every method is safe to call from any thread; `apply` makes all of
/// its operations durable in one transaction before it returns (all or none), then drops the oldest records
/// beyond `limit` and returns how many it dropped; ids only grow.
protocol QueueStore: AnyObject, Sendable {
    /// Applies operations atomically and enforces the size bound; returns the number of records dropped.
    func apply(_ operations: [QueueOperation], limit: Int) throws -> Int
    /// Appends one prepared event unless a record with the same insert id is queued; true when appended.
    func appendPrepared(_ endpoint: Endpoint, insertId: String, json: String, limit: Int) throws -> Bool
    /// The oldest records that fit one request.
    func nextBatch(maxCount: Int, maxBytes: Int) throws -> QueueBatch?
    /// Removes records by id.
    func remove(_ ids: [Int64]) throws
    /// Queued record count.
    var count: Int { get }
    /// The newest record id (0 when none was ever queued).
    var lastId: Int64 { get }
    /// The oldest queued record id (nil when empty).
    func oldestId() throws -> Int64?
    /// A persisted setting.
    func meta(_ key: String) -> String?
}
