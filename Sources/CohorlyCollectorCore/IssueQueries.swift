import CohorlyCollectorAPI
import CohorlySQLite

/// The read side of issues (like ``CrashQueries`` for occurrences): lists, one issue, its counts per day and per
/// release, its occurrences and its transitions. Reads run on the store's read connection: they never wait for
/// ingestion. Times in answers are unix seconds.
struct IssueQueries: Sendable {
    let store: CollectorStore

    static let columns = """
        id, fingerprint, title, subtitle, level, mechanism, state, resolved_in_release, muted_until, muted_for,
        first_seen, last_seen, occurrences, users, first_release, last_release, latest_event_id, culprit, app,
        short_id
        """

    /// Up to `limit` issues matching `filter`, in `sort` order (descending; ties newest id first).
    ///
    /// Only the issues that can be among them are counted with their staged occurrences (IssuePending.swift), not
    /// all of them (100,000 issues otherwise cost every list a join and a sort of each): the first `limit` by their
    /// stored counters of those without staged rows — whose stored counters are their counters — and every issue
    /// with staged rows, whose counters only grow by them (scripts/bench-collector's search benchmark).
    func list(_ filter: IssueFilter, sort: IssueSort, limit: Int) throws -> [IssueSummary] {
        let order: String
        switch sort {
        case .lastSeen: order = "last_seen DESC, id DESC"
        case .occurrences: order = "occurrences DESC, last_seen DESC, id DESC"
        case .users: order = "users DESC, last_seen DESC, id DESC"
        }
        let count = SQLiteStatement.Value.int(Int64(max(0, limit)))
        return try store.reading { db in
            let condition = try IssueFilterSQL(filter, db: db)
            let unstaged = (condition.clauses + ["id NOT IN (SELECT issue_id FROM issue_occurrences_new)"])
                .joined(separator: " AND ")
            var result: [IssueSummary] = []
            try db.prepare(
                """
                WITH candidates(id) AS (
                    SELECT id FROM (SELECT id FROM issues WHERE \(unstaged) ORDER BY \(order) LIMIT ?)
                    UNION SELECT issue_id FROM issue_occurrences_new)
                SELECT \(Self.columns)
                FROM (\(IssuePending.issues(where: "i.id IN (SELECT id FROM candidates)")))\(condition.whereSQL)
                ORDER BY \(order) LIMIT ?
                """
            ).rows(condition.values + [count] + condition.values + [count]) {
                result.append(Self.summary($0))
                return true
            }
            return result
        }
    }

    /// The issue `id` (nil: none).
    func issue(id: Int64) throws -> IssueSummary? {
        try store.reading { db in
            var found: IssueSummary?
            try db.prepare(
                "SELECT \(Self.columns) FROM (\(IssuePending.issues(where: "i.id = ?1", pendingFilter: "issue_id = ?1")))"
            ).rows([.int(id)]) {
                found = Self.summary($0)
                return false
            }
            return found
        }
    }

    /// The id of the issue whose short id is `shortId` (any case), nil when none.
    func issueId(shortId: String) throws -> Int64? {
        guard let normalized = IssueShortId.normalized(shortId) else { return nil }
        return try store.reading { db in
            var found: Int64?
            try db.prepare("SELECT id FROM issues WHERE short_id = ?").rows([.text(normalized)]) {
                found = $0.int(0)
                return false
            }
            return found
        }
    }

    /// The apps that have issues, by name, with how many issues each has.
    func apps() throws -> [(app: String, issues: Int)] {
        try store.reading { db in
            var result: [(app: String, issues: Int)] = []
            try db.prepare("SELECT app, COUNT(*) FROM issues GROUP BY app ORDER BY app").rows { row in
                result.append((row.text(0) ?? "", Int(clamping: row.int(1))))
                return true
            }
            return result
        }
    }

    /// Occurrences per UTC day for the `days` days ending with `now`'s (unix seconds), oldest first; `id` nil:
    /// of every issue.
    func occurrencesPerDay(id: Int64?, days: Int, now: Int64) throws -> [Int] {
        guard days > 0 else { return [] }
        let today = now / 86_400
        let first = today - Int64(days - 1)
        var counts = Array(repeating: 0, count: days)
        // Every issue's: the `$exception` events, by the events' (event, time) index (one index less to keep up
        // at ingestion than one on the occurrences' time).
        let sql =
            id == nil
            ? "SELECT time / 86400000 AS day, COUNT(*) FROM events WHERE event = '$exception' AND time >= ?1 AND time < ?2"
            : """
            SELECT time / 86400000 AS day, COUNT(*) FROM (
                SELECT time FROM issue_occurrences WHERE issue_id = ?3 AND time >= ?1 AND time < ?2
                UNION ALL SELECT time FROM issue_occurrences_new WHERE issue_id = ?3 AND time >= ?1 AND time < ?2)
            """
        var values: [SQLiteStatement.Value] = [.int(first * 86_400_000), .int((today + 1) * 86_400_000)]
        if let id { values.append(.int(id)) }
        try store.reading { db in
            try db.prepare(sql + " GROUP BY day").rows(values) { row in
                let index = Int(row.int(0) - first)
                if counts.indices.contains(index) { counts[index] = Int(row.int(1)) }
                return true
            }
        }
        return counts
    }

    /// Occurrences of the issue per release, the most first (occurrences without a release are not counted).
    func occurrencesPerRelease(id: Int64) throws -> [(release: String, count: Int)] {
        try store.reading { db in
            var result: [(release: String, count: Int)] = []
            try db.prepare(
                """
                SELECT r.release, SUM(r.count) AS count FROM (
                    SELECT release, count FROM issue_releases WHERE issue_id = ?1
                    UNION ALL SELECT release, COUNT(*) FROM issue_occurrences_new
                        WHERE issue_id = ?1 AND release IS NOT NULL GROUP BY release) r
                LEFT JOIN issue_release_order o ON o.name = r.release
                GROUP BY r.release HAVING SUM(r.count) > 0 ORDER BY min(o.rank)
                """
            ).rows([.int(id)]) { row in
                result.append((row.text(0) ?? "", Int(row.int(1))))
                return true
            }
            return result
        }
    }

    /// The issue's occurrences (``StoredEvent/id``s), newest crash time first; `before` (an event id of the
    /// issue) continues a list after that occurrence.
    func occurrenceIds(id: Int64, limit: Int, before: Int64?) throws -> [Int64] {
        try store.reading { db in
            // The cursor: the crash time of occurrence `before` (a row of either table).
            var cursor: (time: Int64, id: Int64)?
            if let before {
                try db.prepare(
                    """
                    SELECT time FROM issue_occurrences WHERE event_id = ?1
                    UNION ALL SELECT time FROM issue_occurrences_new WHERE event_id = ?1
                    """
                ).rows([.int(before)]) { row in
                    cursor = (row.int(0), before)
                    return false
                }
                guard cursor != nil else { return [] }
            }
            // Each table's newest `limit` (by its index, or the few staged rows), then the newest of both.
            let after = cursor == nil ? "" : " AND (time, event_id) < (?2, ?3)"
            let values: [SQLiteStatement.Value] = [
                .int(id), .int(cursor?.time ?? 0), .int(cursor?.id ?? 0), .int(Int64(max(0, limit))),
            ]
            var result: [Int64] = []
            try db.prepare(
                """
                SELECT event_id FROM (
                    SELECT * FROM (SELECT event_id, time FROM issue_occurrences WHERE issue_id = ?1\(after)
                        ORDER BY time DESC, event_id DESC LIMIT ?4)
                    UNION ALL
                    SELECT * FROM (SELECT event_id, time FROM issue_occurrences_new WHERE issue_id = ?1\(after)
                        ORDER BY time DESC, event_id DESC LIMIT ?4))
                ORDER BY time DESC, event_id DESC LIMIT ?4
                """
            ).rows(values) { row in
                result.append(row.int(0))
                return true
            }
            return result
        }
    }

    /// The issue's state changes, oldest first.
    func transitions(id: Int64) throws -> [IssueTransition] {
        try store.reading { db in
            var result: [IssueTransition] = []
            try db.prepare(
                "SELECT from_state, to_state, time, release, note FROM issue_transitions WHERE issue_id = ? ORDER BY id"
            ).rows([.int(id)]) { row in
                result.append(
                    IssueTransition(
                        from: row.text(0).flatMap(IssueState.init(rawValue:)) ?? .open,
                        to: row.text(1).flatMap(IssueState.init(rawValue:)) ?? .open, time: row.int(2),
                        release: row.text(3), note: row.text(4)))
                return true
            }
            return result
        }
    }

    /// A row of ``columns``.
    static func summary(_ row: SQLiteStatement) -> IssueSummary {
        IssueSummary(
            id: row.int(0), fingerprint: row.text(1) ?? "", title: row.text(2) ?? "", subtitle: row.text(3) ?? "",
            culprit: row.text(17) ?? "", level: row.text(4) ?? "", mechanism: row.text(5) ?? "",
            state: row.text(6).flatMap(IssueState.init(rawValue:)) ?? .open, resolvedInRelease: row.text(7),
            mutedUntil: row.optionalInt(8), mutedForOccurrences: row.optionalInt(9).map { Int(clamping: $0) },
            firstSeen: Self.seconds(row.int(10)), lastSeen: Self.seconds(row.int(11)),
            occurrences: Int(clamping: row.int(12)), users: Int(clamping: row.int(13)), firstRelease: row.text(14),
            lastRelease: row.text(15), latestEventId: row.int(16), app: row.text(18) ?? "", shortId: row.text(19) ?? "")
    }

    /// Unix ms → s, rounded down (a time before 1970 too).
    static func seconds(_ milliseconds: Int64) -> Int64 {
        milliseconds / 1000 - (milliseconds % 1000 < 0 ? 1 : 0)
    }
}
