import CohorlyCrashModel
import CohorlySQLite

/// Regrouping on upgrade: issues stored by a collector whose key was made another way (``IssueKey/version``, kept
/// in `issue_meta`) are keyed again when the database is opened, so an upgraded collector shows the list the new
/// key makes rather than the old issues beside new ones. Every stored occurrence is keyed again from its event
/// (with the names the device sent; raw frames stay raw until their debug file is uploaded). An issue keeps its id,
/// state and history under the new key most of its occurrences get (ties: the one seen last), unless an older
/// issue took that key; the other occurrences move to the issue of their new key (the oldest such issue, or one
/// created), the issues they leave are counted again, and removed when empty. A move changes no state. An issue
/// that changes app gets a short id in its new app (IssueApp.swift); the function index is filled again.
extension IssueRegrouping {
    /// The table holding the key's version.
    static let metaSchema = "CREATE TABLE IF NOT EXISTS issue_meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"

    /// Keys again every occurrence of `store` when its issues were keyed by an earlier version; returns how many
    /// occurrences changed issue. A fresh database is only marked with the current version.
    @discardableResult
    static func upgradeKeys(store: CollectorStore) throws -> Int {
        try store.lock.withLock {
            defer { store.forgetIssueWriter() }
            return try store.db.transaction { try upgradeKeys(store.db) }
        }
    }

    /// The version the stored issues were keyed by: 1 (before versions were kept) when there are issues and no
    /// version, nil for a database without issues or version.
    static func storedKeyVersion(_ db: SQLiteDatabase) throws -> Int? {
        var version: Int?
        try db.prepare("SELECT value FROM issue_meta WHERE name = 'key_version'").rows { row in
            version = Int(row.int(0))
            return false
        }
        if version != nil { return version }
        var hasIssues = false
        try db.prepare("SELECT 1 FROM issues LIMIT 1").rows { _ in
            hasIssues = true
            return false
        }
        return hasIssues ? 1 : nil
    }

    private static func upgradeKeys(_ db: SQLiteDatabase) throws -> Int {
        try db.execute(metaSchema)
        guard let stored = try storedKeyVersion(db), stored != IssueKey.version else {
            try IssueApp.assignShortIds(db)
            try IssueTexts.fillIfMissing(db)
            try setKeyVersion(db)
            return 0
        }
        try IssueWriter.moveStaged(db)
        // Every occurrence with its event, keyed again.
        var entries: [(eventId: Int64, issue: Int64, occurrence: IssueOccurrence)] = []
        try db.prepare(
            """
            SELECT o.event_id, o.issue_id, o.time, o.distinct_id, e.properties, e.crash FROM issue_occurrences o
            JOIN events e ON e.id = o.event_id ORDER BY o.event_id
            """
        ).rows { row in
            let text = CollectorStore.propertiesJSON(row.text(4), crash: row.text(5))
            guard let properties = JSONValue(json: text) else { return true }
            let crash = CapturedException(exceptionEvent: properties)
            var key = IssueKey(IssueKey.grouped(crash), custom: properties[CollectorStore.NewEvent.fingerprintProperty])
            key.app = IssueApp.name(of: properties)
            let occurrence = IssueOccurrence(
                key: key, functions: IssueFunctions.names(of: crash),
                release: properties["release"]?.stringValue, time: row.int(2), distinctId: row.text(3) ?? "")
            entries.append((row.int(0), row.int(1), occurrence))
            return true
        }
        // Each issue takes the new key most of its occurrences get (ties: the one seen last), the oldest issue
        // first, unless an issue took it already.
        var tally: [Int64: [IssueKey.Identity: (count: Int, last: Int64)]] = [:]
        var keys: [IssueKey.Identity: IssueKey] = [:]
        for entry in entries {
            let identity = entry.occurrence.key.identity
            let before = tally[entry.issue]?[identity] ?? (0, .min)
            tally[entry.issue, default: [:]][identity] = (before.count + 1, max(before.last, entry.occurrence.time))
            keys[identity] = entry.occurrence.key
        }
        var owner: [IssueKey.Identity: Int64] = [:]
        try db.prepare("SELECT id, app, fingerprint FROM issues").rows { row in
            if tally[row.int(0)] == nil, let fingerprint = row.text(2) {
                owner[IssueKey.Identity(app: row.text(1) ?? "", fingerprint: fingerprint)] = row.int(0)
            }
            return true
        }
        // An issue that stays in its app keeps its short id; one that changes app gets a new one.
        let rename = try db.prepare(
            """
            UPDATE issues SET short_id = CASE WHEN app = ?1 THEN short_id END, app = ?1, fingerprint = ?2,
                title = ?3, subtitle = ?4, culprit = ?5, level = ?6, mechanism = ?7 WHERE id = ?8
            """)
        let park = try db.prepare("UPDATE issues SET fingerprint = 'regrouping:' || id WHERE id = ?")
        var renamed: [(issue: Int64, key: IssueKey)] = []
        for issue in tally.keys.sorted() {
            guard
                let identity = tally[issue]?.max(by: {
                    ($0.value.count, $0.value.last, $1.key.app, $1.key.fingerprint)
                        < ($1.value.count, $1.value.last, $0.key.app, $0.key.fingerprint)
                })?
                .key,
                owner[identity] == nil, let key = keys[identity]
            else { continue }
            owner[identity] = issue
            renamed.append((issue, key))
            // Out of the way first: an issue renamed later in this pass may hold this fingerprint now.
            try park.run([.int(issue)])
        }
        for (issue, key) in renamed {
            try rename.run([
                .text(key.app), .text(key.fingerprint), .text(key.title), .text(key.subtitle), .text(key.culprit),
                .text(key.level), .text(key.mechanism), .int(issue),
            ])
        }
        try IssueApp.assignShortIds(db)
        // The rest move to the issue of their new key; the function index is filled again.
        try db.execute("DELETE FROM issue_raw; DELETE FROM issue_functions")
        let raw = try db.prepare("INSERT OR IGNORE INTO issue_raw(build_id, event_id) VALUES (?,?)")
        let functions = try IssueFunctionWriter(db)
        var moves: [(occurrence: IssueOccurrence, eventId: Int64)] = []
        var left: Set<Int64> = []
        for entry in entries {
            if owner[entry.occurrence.key.identity] == entry.issue {
                for id in entry.occurrence.key.rawBuildIds { try raw.run([.text(id), .int(entry.eventId)]) }
                try functions.add(entry.occurrence.functions, issue: entry.issue)
                continue
            }
            moves.append((entry.occurrence, entry.eventId))
            left.insert(entry.issue)
        }
        let writer = try IssueWriter(db, staged: false)
        try writer.record(moves, arrival: 0, changesState: false)
        for issue in left { try IssueRecount.recount(issue: issue, db: db) }
        try IssueTexts.refill(db)
        try setKeyVersion(db)
        return moves.count
    }

    private static func setKeyVersion(_ db: SQLiteDatabase) throws {
        try db.prepare("INSERT OR REPLACE INTO issue_meta(name, value) VALUES ('key_version', ?)")
            .run([.int(Int64(IssueKey.version))])
    }
}
