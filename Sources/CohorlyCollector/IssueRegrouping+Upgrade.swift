import CohorlySQLite

/// Regrouping on upgrade: issues stored by a collector whose key was made another way (``IssueKey/version``, kept
/// in `issue_meta`) are keyed again when the database is opened, so an upgraded collector shows the list the new
/// key makes rather than the old issues beside new ones. Every stored occurrence is keyed again from its event
/// (with the names the device sent; raw frames stay raw until their debug file is uploaded). An issue whose
/// occurrences all get one new key, which no issue has yet, keeps its id, state and history under the new key; the
/// others' occurrences move to the issue of their new key (the oldest such issue, or one created), the issues
/// they leave are counted again, and removed when empty. A move changes no state.
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
            try setKeyVersion(db)
            return 0
        }
        try IssueWriter.moveStaged(db)
        // Every occurrence with its event, keyed again.
        var entries: [(eventId: Int64, issue: Int64, time: Int64, distinctId: String, occurrence: IssueOccurrence)] =
            []
        try db.prepare(
            """
            SELECT o.event_id, o.issue_id, o.time, o.distinct_id, e.properties, e.crash FROM issue_occurrences o
            JOIN events e ON e.id = o.event_id ORDER BY o.event_id
            """
        ).rows { row in
            let text = CollectorStore.propertiesJSON(row.text(4), crash: row.text(5))
            guard let properties = JSONValue(json: text) else { return true }
            let key = IssueKey(properties: properties)
            let occurrence = IssueOccurrence(
                key: key, release: properties["release"]?.stringValue, time: row.int(2), distinctId: row.text(3) ?? "")
            entries.append((row.int(0), row.int(1), row.int(2), row.text(3) ?? "", occurrence))
            return true
        }
        // Issues whose occurrences all get one new key take it (the oldest issue first), unless it is taken.
        var fingerprints: [Int64: Set<String>] = [:]
        var latest: [Int64: IssueKey] = [:]
        for entry in entries {
            fingerprints[entry.issue, default: []].insert(entry.occurrence.key.fingerprint)
            latest[entry.issue] = entry.occurrence.key
        }
        var owner: [String: Int64] = [:]
        try db.prepare("SELECT id, fingerprint FROM issues").rows { row in
            if fingerprints[row.int(0)] == nil, let fingerprint = row.text(1) { owner[fingerprint] = row.int(0) }
            return true
        }
        let rename = try db.prepare(
            "UPDATE issues SET fingerprint = ?, title = ?, subtitle = ?, culprit = ?, level = ?, mechanism = ? WHERE id = ?"
        )
        let park = try db.prepare("UPDATE issues SET fingerprint = 'regrouping:' || id WHERE id = ?")
        var renamed: [(issue: Int64, key: IssueKey)] = []
        for issue in fingerprints.keys.sorted() {
            guard let set = fingerprints[issue], set.count == 1, let fingerprint = set.first,
                owner[fingerprint] == nil, let key = latest[issue]
            else { continue }
            owner[fingerprint] = issue
            renamed.append((issue, key))
            // Out of the way first: an issue renamed later in this pass may hold this fingerprint now.
            try park.run([.int(issue)])
        }
        for (issue, key) in renamed {
            try rename.run([
                .text(key.fingerprint), .text(key.title), .text(key.subtitle), .text(key.culprit), .text(key.level),
                .text(key.mechanism), .int(issue),
            ])
        }
        // The rest move to the issue of their new key.
        try db.execute("DELETE FROM issue_raw")
        let raw = try db.prepare("INSERT OR IGNORE INTO issue_raw(build_id, event_id) VALUES (?,?)")
        var moves: [(occurrence: IssueOccurrence, eventId: Int64)] = []
        var left: Set<Int64> = []
        for entry in entries {
            if owner[entry.occurrence.key.fingerprint] == entry.issue {
                for id in entry.occurrence.key.rawBuildIds { try raw.run([.text(id), .int(entry.eventId)]) }
                continue
            }
            moves.append((entry.occurrence, entry.eventId))
            left.insert(entry.issue)
        }
        let writer = try IssueWriter(db, staged: false)
        try writer.record(moves, arrival: 0, changesState: false)
        for issue in left { try IssueRecount.recount(issue: issue, db: db) }
        try setKeyVersion(db)
        return moves.count
    }

    private static func setKeyVersion(_ db: SQLiteDatabase) throws {
        try db.prepare("INSERT OR REPLACE INTO issue_meta(name, value) VALUES ('key_version', ?)")
            .run([.int(Int64(IssueKey.version))])
    }
}
