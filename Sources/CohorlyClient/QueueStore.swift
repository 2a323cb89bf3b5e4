/// What a queued record is, whatever the wire: the queue holds these, and the destination encodes and batches
/// them when it sends (so a record survives a change of destination, and a new destination needs no new rows).
package enum RecordKind: String, Sendable {
    /// A tracked or prepared event, `{"event": name, "properties": {…}}` with its properties complete
    /// (`distinct_id`, `time` and `$insert_id` included).
    case event
    /// A profile operation (identify, alias, people), as ``ProfileOperation``'s JSON.
    case profile
    /// A prepared exception (crash, handled error, hang, abnormal exit), as ``QueuedException``'s JSON.
    case exception
    /// A destination's own record of a launch, as the destination that follows launches wrote it (opaque JSON it
    /// encodes and reads; other destinations drop it). Rows of earlier versions name it `session`.
    case launch
}

/// One change to the persisted state, applied in order by the store.
package enum QueueOperation: Sendable {
    /// Appends a record (`prepared` marks fully formed events such as crashes, which `reset()` keeps).
    case append(RecordKind, insertId: String?, json: String, prepared: Bool)
    /// Sets (or with nil removes) a persisted setting: identity, super properties, opt-out.
    case setMeta(String, String?)
    /// Removes queued records; `keepPrepared` keeps prepared events.
    case clear(keepPrepared: Bool)
    /// Replaces the text of the queued prepared record with dedupe key `insertId` (nothing when it is no longer
    /// queued).
    case replace(insertId: String, json: String)
}

/// One queued record as read back.
package struct QueueEntry: Sendable, Equatable {
    package var id: Int64
    package var kind: RecordKind
    /// Its dedupe key (`$insert_id`); nil for records that are never deduplicated.
    package var insertId: String?
    /// The record's JSON text (see ``RecordKind``).
    package var json: String
}

/// The oldest queued records, as the store read them for one delivery: oldest first, no repeated dedupe key,
/// within the byte bound. The destination decides how many of them one request carries
/// (``Destination/requestLength(of:)``).
package struct QueueBatch: Sendable {
    package var entries: [QueueEntry]

    package var ids: [Int64] { entries.map(\.id) }
    package var count: Int { entries.count }

    /// The first `length` entries.
    package func prefix(_ length: Int) -> QueueBatch { QueueBatch(entries: Array(entries.prefix(max(1, length)))) }

    /// The entries' JSON texts joined into one JSON array's text, between `prefix` and `suffix`.
    package func joined(prefix: String = "[", suffix: String = "]") -> [UInt8] {
        Self.joined(entries.map(\.json), prefix: prefix, suffix: suffix)
    }

    /// `texts` (JSON values) joined into one JSON array's text, between `prefix` and `suffix`.
    package static func joined(_ texts: [String], prefix: String = "[", suffix: String = "]") -> [UInt8] {
        var text = prefix
        text.reserveCapacity(texts.reduce(prefix.utf8.count + suffix.utf8.count) { $0 + $1.utf8.count + 1 })
        for (index, record) in texts.enumerated() {
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
    /// Applies the operations `decide` makes from the settings as read in the same write transaction, which no
    /// other process or thread writes meanwhile: a read-modify-write of settings that others change too.
    func apply(limit: Int, _ decide: (any QueueSettings) -> [QueueOperation]) throws -> Int
    /// Appends one prepared event unless a record with the same insert id is queued; true when appended.
    func appendPrepared(_ kind: RecordKind, insertId: String, json: String, limit: Int) throws -> Bool
    /// The oldest records (at most `maxCount`, their JSON within `maxBytes`, no dedupe key twice); rows of earlier
    /// versions read with `optionProperties` (``Destination/legacyOptionProperties``).
    func nextBatch(maxCount: Int, maxBytes: Int, optionProperties: OptionProperties) throws -> QueueBatch?
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
    /// How many unreadable rows (another version's) `nextBatch` removed since the last call.
    func takeDroppedUnreadable() -> Int
}

extension QueueStore {
    func takeDroppedUnreadable() -> Int { 0 }
}

/// The persisted settings as one transaction reads them.
package protocol QueueSettings {
    /// The setting `key`.
    func value(_ key: String) -> String?
    /// Every setting whose key starts with `prefix`, in key order.
    func values(prefix: String) -> [(key: String, value: String)]
}
