import CohorlySQLite

/// Counts an issue again from the occurrences it holds (after regrouping moved some away); removes it, with its
/// transitions, when it holds none. The store's lock held, inside a transaction.
enum IssueRecount {
    static func recount(issue: Int64, db: SQLiteDatabase) throws {
        var remaining: Int64 = 0
        try db.prepare("SELECT COUNT(*) FROM issue_occurrences WHERE issue_id = ?").rows([.int(issue)]) { row in
            remaining = row.int(0)
            return false
        }
        guard remaining > 0 else {
            for table in [
                "issues WHERE id", "issue_transitions WHERE issue_id", "issue_users WHERE issue_id",
                "issue_releases WHERE issue_id", "issue_functions WHERE issue_id",
                "issue_texts WHERE issue_id",
            ] {
                try db.prepare("DELETE FROM \(table) = ?").run([.int(issue)])
            }
            return
        }
        try db.prepare("DELETE FROM issue_users WHERE issue_id = ?").run([.int(issue)])
        try db.prepare(
            """
            INSERT INTO issue_users(issue_id, distinct_id) SELECT DISTINCT issue_id, distinct_id
            FROM issue_occurrences WHERE issue_id = ? AND distinct_id != ''
            """
        ).run([.int(issue)])
        try db.prepare("DELETE FROM issue_releases WHERE issue_id = ?").run([.int(issue)])
        try db.prepare(
            """
            INSERT INTO issue_releases(issue_id, release, count) SELECT issue_id, release, COUNT(*)
            FROM issue_occurrences WHERE issue_id = ? AND release IS NOT NULL GROUP BY release
            """
        ).run([.int(issue)])
        try db.prepare(
            """
            UPDATE issues SET
                occurrences = (SELECT COUNT(*) FROM issue_occurrences WHERE issue_id = ?1),
                users = (SELECT COUNT(*) FROM issue_users WHERE issue_id = ?1),
                first_seen = (SELECT min(time) FROM issue_occurrences WHERE issue_id = ?1),
                last_seen = (SELECT max(time) FROM issue_occurrences WHERE issue_id = ?1),
                first_release = (SELECT release FROM issue_occurrences WHERE issue_id = ?1
                    ORDER BY time, event_id LIMIT 1),
                last_release = (SELECT release FROM issue_occurrences WHERE issue_id = ?1
                    ORDER BY time DESC, event_id DESC LIMIT 1),
                latest_event_id = (SELECT event_id FROM issue_occurrences WHERE issue_id = ?1
                    ORDER BY time DESC, event_id DESC LIMIT 1)
            WHERE id = ?1
            """
        ).run([.int(issue)])
    }
}
