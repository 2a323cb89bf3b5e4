import CSQLite
import CohorlyCrashModel
import CohorlyFiles
import CohorlySQLite
import Foundation

/// An event as the collector stored it.
public struct StoredEvent: Sendable, Hashable {
    /// Row id: the order of arrival.
    public var id: Int64
    /// The event name.
    public var event: String
    /// Its `distinct_id`.
    public var distinctId: String
    /// Its time in unix milliseconds (receipt time when the event had none).
    public var time: Int64
    /// Its `$insert_id`, when it had one.
    public var insertId: String?
    /// Its properties as JSON text (per-record token removed).
    public var propertiesJSON: String
    /// When the collector received it, unix milliseconds.
    public var receivedAt: Int64
    /// A crash's model as stored (StoredCrash.swift); nil for any other event.
    var crashJSON: String? = nil

    /// The crash of an `$exception` event: its stored model, else (a row an earlier collector stored, not
    /// converted) its properties read as PostHog's shape; nil for any other event.
    var crash: CapturedException? {
        if let crashJSON, let crash = StoredCrash.crash(crashJSON, propertiesJSON: propertiesJSON) { return crash }
        guard event == CapturedException.eventName else { return nil }
        return CapturedException(exceptionEvent: JSONValue(json: propertiesJSON) ?? .object([:]))
    }
}

/// A stored `/alias` or `/engage` record.
public struct StoredRecord: Sendable, Hashable {
    /// Row id.
    public var id: Int64
    /// The record as JSON text (token removed).
    public var json: String
}

/// Filters for `events(matching:)`; nil fields match everything.
public struct EventQuery: Sendable {
    /// Only this event name.
    public var event: String?
    /// Only this distinct id.
    public var distinctId: String?
    /// Only this `$insert_id`.
    public var insertId: String?
    /// Only rows after this id.
    public var afterId: Int64?
    /// At most this many rows. Default 1000.
    public var limit: Int = 1000
    /// Newest first (and `afterId` then means "before this id"). Default false: oldest first.
    public var newestFirst = false
    /// In the order of the events' own `time` (a crash's crash time, not when it arrived), rows of one time by id;
    /// `afterId` then means "after that row in this order". Default false: in the order they were received.
    public var byTime = false
    /// Only events whose `$insert_id` starts with this (`cohorly crashes show` takes a unique prefix).
    public var insertIdPrefix: String?

    /// A query matching every event (first 1000, oldest first).
    public init(
        event: String? = nil, distinctId: String? = nil, insertId: String? = nil, afterId: Int64? = nil,
        limit: Int = 1000, newestFirst: Bool = false
    ) {
        self.event = event
        self.distinctId = distinctId
        self.insertId = insertId
        self.afterId = afterId
        self.limit = limit
        self.newestFirst = newestFirst
    }
}

/// The collector's SQLite storage: events deduplicated by (token, `$insert_id`), aliases and profile operations.
/// Each batch is inserted in one transaction, so a rejected batch is never partly inserted. Reads of a database
/// file run on their own connection under their own lock (WAL readers see the last commit and never block the
/// writer), so a long read — a 100,000-row page, crash reasons looked up row by row — never holds what ingestion
/// needs; an in-memory database has one connection for both.
public final class CollectorStore: @unchecked Sendable {
    let lock = NSLock()
    let db: SQLiteDatabase
    /// The read connection (nil in memory: reads then share `db` under `lock`).
    private let reader: SQLiteDatabase?
    private let readLock = NSLock()
    /// How `$exception` events are grouped into issues as they are inserted (IssueStore.swift).
    package let issues = IssueGrouping()
    /// The event insert and the issue writer, prepared once and used under `lock`: the Sentry route stores one
    /// event per request, where preparing a dozen statements each time cost more than the inserts themselves.
    private var eventInsert: SQLiteStatement?
    private var issueWriter: IssueWriter?
    /// Staged occurrence rows the issue writer moves at once (IssueWriter.swift; tests make it small).
    var issueStagedLimit = IssueWriter.stagedLimit
    /// Inserts waiting to share a transaction (CollectorStore+GroupCommit.swift).
    let groupCommit = GroupCommit()

    /// Opens or creates `collector.sqlite` in `directory` (nil: a private in-memory database).
    public init(directory: URL?) throws {
        if let directory {
            try PrivateFiles.makeDirectory(directory.path)
            db = try SQLiteDatabase(path: directory.appendingPathComponent("collector.sqlite").path)
            // A read keeps its snapshot of the write-ahead log while it runs, and checkpoints copy the log back only
            // up to the oldest snapshot: with reads back to back the log grows as long as they run (60-170 MiB in
            // scripts/bench-collector's 12 s of them). Once it starts over, it is trimmed to 16 MiB.
            try db.execute(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-8192; "
                    + "PRAGMA journal_size_limit=16777216")
        } else {
            db = try SQLiteDatabase(path: ":memory:")
        }
        try db.execute(
            """
            CREATE TABLE IF NOT EXISTS events(
                id INTEGER PRIMARY KEY AUTOINCREMENT, token TEXT NOT NULL, event TEXT NOT NULL,
                distinct_id TEXT NOT NULL, time INTEGER NOT NULL, insert_id TEXT, properties TEXT NOT NULL,
                received_at INTEGER NOT NULL);
            CREATE UNIQUE INDEX IF NOT EXISTS events_insert_id ON events(token, insert_id);
            CREATE INDEX IF NOT EXISTS events_name ON events(event);
            CREATE INDEX IF NOT EXISTS events_name_time ON events(event, time);
            CREATE TABLE IF NOT EXISTS records(
                id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, token TEXT NOT NULL, body TEXT NOT NULL,
                received_at INTEGER NOT NULL);
            """
        )
        try Self.addCrashColumn(db)
        try db.execute(Self.flagsSchema)
        try Self.createIssueTables(db)
        reader = try directory.map { directory in
            let reader = try SQLiteDatabase(path: directory.appendingPathComponent("collector.sqlite").path)
            try reader.execute("PRAGMA cache_size=-8192; PRAGMA query_only=1")
            return reader
        }
        // Crashes an earlier collector stored as `$exception` properties are stored as their model.
        try Self.storeCrashesAsModels(db)
        // Issues a collector keyed another way are keyed again (IssueRegrouping+Upgrade.swift).
        try IssueRegrouping.upgradeKeys(store: self)
        // Events stored before the breakdowns' table existed get their tags (OccurrenceTags.swift).
        try OccurrenceTags.backfill(store: self)
    }

    /// Whether `error` is SQLite's "database or disk is full" (the answer is then 507, not 500).
    package static func isFull(_ error: any Error) -> Bool {
        guard let error = error as? SQLiteError, let text = sqlite3_errstr(SQLITE_FULL) else { return false }
        return error.description.contains(String(cString: text))
    }

    /// Runs `body` with the connection reads use, holding only what other reads need.
    func reading<T>(_ body: (SQLiteDatabase) throws -> T) rethrows -> T {
        guard let reader else { return try lock.withLock { try body(db) } }
        return try readLock.withLock { try body(reader) }
    }

    package struct NewEvent {
        package var token: String
        package var event: String
        package var distinctId: String
        package var time: Int64
        package var insertId: String?
        package var propertiesJSON: String
        /// The same properties parsed, when the ingestion route has them.
        package var properties: JSONValue? = nil
        /// The crash of an `$exception` event, decoded where the event arrived (ExceptionEventDecoding.swift, a
        /// vendor's wire): what the issue grouping reads.
        package var crash: CapturedException? = nil
        /// The fingerprint the sender chose for the crash (`$exception_fingerprint`, or a wire's own),
        /// decoded with it.
        package var fingerprint: JSONValue? = nil
        /// The `crash` column (StoredCrash.swift), once ``prepared()`` wrote it (`propertiesJSON` is then what the
        /// model does not say).
        package var crashJSON: String? = nil

        package init(
            token: String, event: String, distinctId: String, time: Int64, insertId: String?, propertiesJSON: String,
            properties: JSONValue? = nil, crash: CapturedException? = nil, fingerprint: JSONValue? = nil,
            crashJSON: String? = nil
        ) {
            self.token = token
            self.event = event
            self.distinctId = distinctId
            self.time = time
            self.insertId = insertId
            self.propertiesJSON = propertiesJSON
            self.properties = properties
            self.crash = crash
            self.fingerprint = fingerprint
            self.crashJSON = crashJSON
        }

        /// The event with its columns' text written: an `$exception` as its model and what the model does not
        /// say (``StoredCrash``), any other event as its properties.
        func prepared() -> NewEvent {
            guard crashJSON == nil else { return self }
            var event = self
            let properties = properties ?? (propertiesJSON.isEmpty ? nil : JSONValue(json: propertiesJSON))
            if let (crash, _) = decodedCrash, let properties {
                let columns = StoredCrash.columns(crash, properties: properties)
                event.crashJSON = columns.crash
                event.propertiesJSON = columns.properties
            } else if propertiesJSON.isEmpty, let properties {
                event.propertiesJSON = properties.jsonString
            }
            return event
        }
    }

    /// Inserts all events or none; returns how many were new (duplicates of a stored `$insert_id` are skipped).
    /// Each new `$exception` is filed under its issue in the same transaction (IssueWriter.swift): `occurrences`
    /// (one per event, ``IssueGrouping/occurrences(for:)``) when the caller found them, else found here.
    package func insert(events: [NewEvent], occurrences: [IssueOccurrence?]? = nil, receivedAt: Int64) throws -> Int {
        let occurrences = occurrences ?? issues.occurrences(for: events)
        let events = events.map { $0.prepared() }
        return try lock.withLock {
            do {
                return try db.transaction { try insertLocked(events, occurrences, receivedAt: receivedAt) }
            } catch {
                forgetIssueWriter()
                throw error
            }
        }
    }

    /// Drops the issue writer and what it knows (the store's lock held): after a rolled-back transaction, whose
    /// rows it may name, and after regrouping, which moved occurrences and removed issues.
    func forgetIssueWriter() { issueWriter = nil }

    /// Inserts `events` (with their issue occurrences) in the transaction the caller holds `lock` and runs.
    func insertLocked(_ events: [NewEvent], _ occurrences: [IssueOccurrence?], receivedAt: Int64) throws
        -> Int
    {
        let statement =
            try eventInsert
            ?? db.prepare(
                "INSERT OR IGNORE INTO events(token, event, distinct_id, time, insert_id, properties, received_at, crash) VALUES (?,?,?,?,?,?,?,?)"
            )
        eventInsert = statement
        var writer: IssueWriter?
        if occurrences.contains(where: { $0 != nil }) {
            writer = try issueWriter ?? IssueWriter(db, stagedLimit: issueStagedLimit)
            issueWriter = writer
        }
        var inserted = 0
        var filed: [(occurrence: IssueOccurrence, eventId: Int64)] = []
        for (event, occurrence) in zip(events, occurrences) {
            try statement.run([
                .text(event.token), .text(event.event), .text(event.distinctId), .int(event.time),
                event.insertId.map { .text($0) } ?? .null, .text(event.propertiesJSON), .int(receivedAt),
                event.crashJSON.map { .text($0) } ?? .null,
            ])
            let new = db.changes
            inserted += new
            if new > 0, let occurrence { filed.append((occurrence, db.lastInsertRowID)) }
        }
        if let writer, !filed.isEmpty { try writer.record(filed, arrival: receivedAt) }
        return inserted
    }

    /// Inserts `/alias` or `/engage` records (kind `alias` / `engage`), all or none.
    func insert(records: [(token: String, json: String)], kind: String, receivedAt: Int64) throws
        -> Int
    {
        try lock.withLock {
            try db.transaction { try insertLocked(records, kind: kind, receivedAt: receivedAt) }
        }
    }

    /// Inserts `records` in the transaction the caller holds `lock` and runs.
    func insertLocked(_ records: [(token: String, json: String)], kind: String, receivedAt: Int64) throws -> Int {
        let statement = try db.prepare("INSERT INTO records(kind, token, body, received_at) VALUES (?,?,?,?)")
        for record in records {
            try statement.run([.text(kind), .text(record.token), .text(record.json), .int(receivedAt)])
        }
        return records.count
    }

    /// Stored events matching `query` (oldest first unless it says otherwise).
    public func events(matching query: EventQuery = EventQuery()) throws -> [StoredEvent] {
        var result: [StoredEvent] = []
        try forEachEvent(matching: query) { event in
            result.append(event)
            return true
        }
        return result
    }

    /// Hands the events matching `query` to `visit` one at a time, in order, without keeping them (memory stays
    /// at one row whatever the database holds); `visit` returns false to stop. Writers do not wait for it (a
    /// database file); `visit` sees the events committed when it started.
    public func forEachEvent(matching query: EventQuery, _ visit: (StoredEvent) throws -> Bool) throws {
        var clauses: [String] = []
        var values: [SQLiteStatement.Value] = []
        if let event = query.event {
            clauses.append("event = ?")
            values.append(.text(event))
        }
        if let distinctId = query.distinctId {
            clauses.append("distinct_id = ?")
            values.append(.text(distinctId))
        }
        if let insertId = query.insertId {
            clauses.append("insert_id = ?")
            values.append(.text(insertId))
        }
        if let afterId = query.afterId, query.byTime {
            // The row after `afterId` in (time, id) order: a keyset cursor, so pages stay stable while events arrive.
            clauses.append("(time, id) \(query.newestFirst ? "<" : ">") ((SELECT time FROM events WHERE id = ?), ?)")
            values += [.int(afterId), .int(afterId)]
        } else if let afterId = query.afterId {
            clauses.append(query.newestFirst ? "id < ?" : "id > ?")
            values.append(.int(afterId))
        }
        if let prefix = query.insertIdPrefix {
            clauses.append("substr(insert_id, 1, ?) = ?")
            values += [.int(Int64(prefix.unicodeScalars.count)), .text(prefix)]
        }
        let filter = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        let direction = query.newestFirst ? " DESC" : ""
        let order = query.byTime ? "time\(direction), id\(direction)" : "id\(direction)"
        values.append(.int(Int64(max(0, query.limit))))
        try reading { db in
            let statement = try db.prepare(
                "SELECT id, event, distinct_id, time, insert_id, properties, received_at, crash FROM events\(filter) ORDER BY \(order) LIMIT ?"
            )
            try statement.rows(values) { row in
                try visit(
                    StoredEvent(
                        id: row.int(0), event: row.text(1) ?? "", distinctId: row.text(2) ?? "",
                        time: row.int(3),
                        insertId: row.text(4),
                        propertiesJSON: Self.propertiesJSON(row.text(5), crash: row.text(7)),
                        receivedAt: row.int(6), crashJSON: row.text(7)))
            }
        }
    }

    /// Number of stored events.
    public func eventCount() throws -> Int {
        try reading { db in
            var count: Int64 = 0
            try db.prepare("SELECT COUNT(*) FROM events").rows { row in
                count = row.int(0)
                return false
            }
            return Int(count)
        }
    }

    /// Stored `/alias` (`kind: "alias"`) or `/engage` (`kind: "engage"`) records, oldest first.
    public func records(kind: String) throws -> [StoredRecord] {
        var result: [StoredRecord] = []
        try forEachRecord(kind: kind, afterId: nil, limit: Int.max) { record in
            result.append(record)
            return true
        }
        return result
    }

    /// Hands up to `limit` records of `kind` with an id above `afterId` to `visit`, oldest first, one at a time;
    /// `visit` returns false to stop.
    func forEachRecord(kind: String, afterId: Int64?, limit: Int, _ visit: (StoredRecord) throws -> Bool) throws {
        try reading { db in
            let statement = try db.prepare("SELECT id, body FROM records WHERE kind = ? AND id > ? ORDER BY id LIMIT ?")
            try statement.rows([.text(kind), .int(afterId ?? 0), .int(Int64(max(0, limit)))]) { row in
                try visit(StoredRecord(id: row.int(0), json: row.text(1) ?? "{}"))
            }
        }
    }
}
