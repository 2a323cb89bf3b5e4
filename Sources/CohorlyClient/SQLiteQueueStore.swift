import CohorlySQLite
import Foundation

/// The persisted queue in SQLite (WAL journal, `synchronous=NORMAL`): survives `kill -9` at any moment, since a
/// record exists only once its transaction committed; prepared events are committed with a full fsync. One
/// connection, serialized by a lock held only for short statements.
///
/// A row's `kind` column holds its ``RecordKind`` (rows of earlier versions: the endpoint they were encoded for, or
/// a kind since renamed, read through ``LegacyQueueRows``). Versions before it named the column `endpoint`: it is
/// renamed when such a queue is opened.
final class SQLiteQueueStore: QueueStore, @unchecked Sendable {
    private let lock = NSLock()
    private let db: SQLiteDatabase
    private let insert: SQLiteStatement
    private let setMeta: SQLiteStatement
    private let deleteMeta: SQLiteStatement
    private let selectBatch: SQLiteStatement
    private let findInsertId: SQLiteStatement
    private let replace: SQLiteStatement
    private var cachedCount: Int
    private var cachedLastId: Int64
    private var droppedUnreadable = 0

    /// Opens or creates the queue database at `path` (`":memory:"` for a non-persistent queue).
    init(path: String) throws {
        db = try SQLiteDatabase(path: path)
        if path != ":memory:" {
            try db.execute("PRAGMA journal_mode=WAL")
            try db.execute("PRAGMA synchronous=NORMAL")
            try db.execute("PRAGMA cache_size=-16384")
        }
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS queue(
                id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, insert_id TEXT,
                body TEXT NOT NULL, prepared INTEGER NOT NULL DEFAULT 0);
            DROP INDEX IF EXISTS queue_insert_id;
            DROP INDEX IF EXISTS queue_prepared;
            CREATE INDEX IF NOT EXISTS queue_prepared_insert_id ON queue(insert_id) WHERE prepared = 1;
            CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            """
        )
        try Self.renameEndpointColumn(db)
        insert = try db.prepare(
            "INSERT INTO queue(kind, insert_id, body, prepared) VALUES (?, ?, ?, ?)")
        setMeta = try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)")
        deleteMeta = try db.prepare("DELETE FROM meta WHERE key = ?")
        selectBatch = try db.prepare(
            "SELECT id, kind, insert_id, body FROM queue ORDER BY id LIMIT ?")
        replace = try db.prepare("UPDATE queue SET body = ? WHERE prepared = 1 AND insert_id = ?")
        findInsertId = try db.prepare("SELECT 1 FROM queue WHERE prepared = 1 AND insert_id = ? LIMIT 1")
        var count: Int64 = 0
        try db.prepare("SELECT COUNT(*) FROM queue").rows { row in
            count = row.int(0)
            return false
        }
        var last: Int64 = 0
        try db.prepare("SELECT COALESCE(MAX(id), 0) FROM queue").rows { row in
            last = row.int(0)
            return false
        }
        cachedCount = Int(count)
        cachedLastId = last
    }

    /// Renames the `endpoint` column of a queue an earlier version made to `kind`, in one write transaction (two
    /// processes opening the queue at once: the second finds it renamed).
    private static func renameEndpointColumn(_ db: SQLiteDatabase) throws {
        try db.transaction {
            var named = false
            try db.prepare("SELECT 1 FROM pragma_table_info('queue') WHERE name = 'endpoint'").rows { _ in
                named = true
                return false
            }
            if named { try db.execute("ALTER TABLE queue RENAME COLUMN endpoint TO kind") }
        }
    }

    var count: Int { lock.withLock { cachedCount } }
    var lastId: Int64 { lock.withLock { cachedLastId } }

    func apply(_ operations: [QueueOperation], limit: Int) throws -> Int {
        try apply(limit: limit) { _ in operations }
    }

    func apply(limit: Int, _ decide: (any QueueSettings) -> [QueueOperation]) throws -> Int {
        try lock.withLock {
            var count = cachedCount
            var last = cachedLastId
            let dropped: Int = try db.transaction {
                for operation in decide(Settings(db: db)) {
                    switch operation {
                    case .append(let kind, let insertId, let json, let prepared):
                        try insert.run([
                            .text(kind.rawValue), insertId.map { .text($0) } ?? .null, .text(json),
                            .int(prepared ? 1 : 0),
                        ])
                        count += 1
                        last = db.lastInsertRowID
                    case .setMeta(let key, let value?):
                        try setMeta.run([.text(key), .text(value)])
                    case .setMeta(let key, nil):
                        try deleteMeta.run([.text(key)])
                    case .clear(let keepPrepared):
                        try db.execute(
                            keepPrepared ? "DELETE FROM queue WHERE prepared = 0" : "DELETE FROM queue")
                        count -= db.changes
                    case .replace(let insertId, let json):
                        try replace.run([.text(json), .text(insertId)])
                    }
                }
                return try trim(&count, limit: limit)
            }
            cachedCount = count
            cachedLastId = last
            return dropped
        }
    }

    /// The settings as the running transaction reads them (the caller holds `lock`).
    private struct Settings: QueueSettings {
        let db: SQLiteDatabase

        func value(_ key: String) -> String? {
            var value: String?
            try? db.prepare("SELECT value FROM meta WHERE key = ?").rows([.text(key)]) { row in
                value = row.text(0)
                return false
            }
            return value
        }

        func values(prefix: String) -> [(key: String, value: String)] {
            var values: [(key: String, value: String)] = []
            try? db.prepare("SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key").rows([
                .int(Int64(prefix.unicodeScalars.count)), .text(prefix),
            ]) { row in
                if let key = row.text(0), let value = row.text(1) { values.append((key, value)) }
                return true
            }
            return values
        }
    }

    func appendPrepared(_ kind: RecordKind, insertId: String, json: String, limit: Int) throws -> Bool {
        try lock.withLock {
            // Prepared events (crash reports) are deleted at their source once this returns: commit them with a
            // full fsync, so they survive a power loss too, not only a process crash.
            try db.execute("PRAGMA synchronous=FULL")
            defer { try? db.execute("PRAGMA synchronous=NORMAL") }
            var count = cachedCount
            var appended = false
            try db.transaction {
                var exists = false
                try findInsertId.rows([.text(insertId)]) { _ in
                    exists = true
                    return false
                }
                guard !exists else { return }
                try insert.run([.text(kind.rawValue), .text(insertId), .text(json), .int(1)])
                count += 1
                appended = true
                cachedLastId = db.lastInsertRowID
                _ = try trim(&count, limit: limit)
            }
            cachedCount = count
            return appended
        }
    }

    /// Drops the oldest records beyond `limit` (inside the caller's transaction): ordinary records first, prepared
    /// events (crash reports) only when nothing else is left to drop.
    private func trim(_ count: inout Int, limit: Int) throws -> Int {
        guard count > limit else { return 0 }
        let excess = count - max(limit, 0)
        // Only prepared events are indexed (a partial index): ordinary records are appended and removed in id
        // order, so the table stays a cheap append-only log.
        try db.execute(
            "DELETE FROM queue WHERE id IN (SELECT id FROM queue WHERE prepared = 0 ORDER BY id LIMIT \(excess))")
        var dropped = db.changes
        if dropped < excess {
            try db.execute("DELETE FROM queue WHERE id IN (SELECT id FROM queue ORDER BY id LIMIT \(excess - dropped))")
            dropped += db.changes
        }
        count -= dropped
        return dropped
    }

    func nextBatch(maxCount: Int, maxBytes: Int, optionProperties: OptionProperties) throws -> QueueBatch? {
        try lock.withLock {
            // Rows this version cannot read (written by another version sharing the file) can never be sent: they
            // are removed as they come, counted for the sender to report, and never stand in front of real records.
            for _ in 0..<1000 {
                var entries: [QueueEntry] = []
                var unreadable: [Int64] = []
                var bytes = 2
                var seen = Set<String>()
                try selectBatch.rows([.int(Int64(max(1, maxCount)))]) { row in
                    guard let json = row.text(3),
                        let entry = LegacyQueueRows.entry(
                            id: row.int(0), stored: row.text(1) ?? "", insertId: row.text(2), json: json,
                            optionProperties: optionProperties)
                    else {
                        unreadable.append(row.int(0))
                        return true
                    }
                    let size = entry.json.utf8.count + 1
                    if !entries.isEmpty && bytes + size > maxBytes { return false }
                    if let insertId = entry.insertId, !seen.insert(insertId).inserted { return false }
                    entries.append(entry)
                    bytes += size
                    return true
                }
                if !unreadable.isEmpty {
                    try db.execute(
                        "DELETE FROM queue WHERE id IN (\(unreadable.map(String.init).joined(separator: ",")))")
                    cachedCount = max(0, cachedCount - db.changes)
                    droppedUnreadable += unreadable.count
                }
                if !entries.isEmpty { return QueueBatch(entries: entries) }
                // Another process sharing the file may have sent records: an empty read is the true count.
                if unreadable.isEmpty {
                    cachedCount = 0
                    return nil
                }
            }
            return nil
        }
    }

    /// Unreadable rows removed since the last call.
    func takeDroppedUnreadable() -> Int {
        lock.withLock {
            defer { droppedUnreadable = 0 }
            return droppedUnreadable
        }
    }

    func remove(_ ids: [Int64]) throws {
        try lock.withLock {
            var removed = 0
            try db.transaction {
                var start = 0
                while start < ids.count {
                    let chunk = ids[start..<min(start + 500, ids.count)]
                    try db.execute("DELETE FROM queue WHERE id IN (\(chunk.map(String.init).joined(separator: ",")))")
                    removed += db.changes
                    start += 500
                }
            }
            cachedCount -= removed
        }
    }

    func oldestId() throws -> Int64? {
        try lock.withLock {
            var oldest: Int64?
            try db.prepare("SELECT MIN(id) FROM queue").rows { row in
                if row.text(0) != nil { oldest = row.int(0) }
                return false
            }
            return oldest
        }
    }

    func meta(_ key: String) -> String? {
        lock.withLock {
            var value: String?
            try? db.prepare("SELECT value FROM meta WHERE key = ?").rows([.text(key)]) { row in
                value = row.text(0)
                return false
            }
            return value
        }
    }
}
