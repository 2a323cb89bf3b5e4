import CohorlySQLite

/// The counters of occurrences still staged (`issue_occurrences_new`, IssueWriter.swift). Ingestion writes an
/// occurrence's row only; its issue's counters (occurrences, users, first and last seen and release, the latest
/// occurrence) and its count per release are added from the staged rows in one pass when they are moved
/// (``fold(_:)``), not by one update per issue per request. Reads add the staged rows to the stored counters
/// with the same expressions (``issues(where:pendingFilter:)``), so they see every committed occurrence; the
/// stored and staged rows commit together, so no state exists where one holds an occurrence the other lacks.
///
/// The writer knows each issue's first and last seen as it files (IssueWriter.swift) and marks in a staged
/// row's `flags` what filing it one by one would change (docs/issues.md: "first" is the earliest crash time,
/// the first to arrive among equals; "latest" the last to arrive among the latest):
/// - ``Flag/latest``: it is the issue's latest occurrence now (crash time ≥ the last seen): the last such row
///   names the latest occurrence and last release;
/// - ``Flag/firstRelease``: it sets the first release: an earlier crash time than the first seen (its release,
///   or none), or the first release of an issue that had none;
/// - ``Flag/newUser``: it brought its (issue, distinct id) pair into `issue_users`.
enum IssuePending {
    /// Bits of `issue_occurrences_new.flags`.
    enum Flag {
        static let latest: Int64 = 1
        static let firstRelease: Int64 = 2
        static let newUser: Int64 = 4
    }

    /// Per issue with staged rows (matching `filter`, a condition on `issue_occurrences_new`): `n`, `new_users`,
    /// `first_time`, `last_time`, `latest_event` and `latest_release` (of the last ``Flag/latest`` row), and
    /// `first_setter` and `setter_release` (of the last ``Flag/firstRelease`` row; NULL when none).
    static func aggregate(where filter: String = "1") -> String {
        """
        SELECT a.*, (SELECT release FROM issue_occurrences_new WHERE event_id = a.latest_event) AS latest_release,
            (SELECT release FROM issue_occurrences_new WHERE event_id = a.first_setter) AS setter_release
        FROM (
            SELECT issue_id, COUNT(*) AS n, SUM(flags >> 2 & 1) AS new_users, MIN(time) AS first_time,
                MAX(time) AS last_time, MAX(CASE WHEN flags & 1 THEN event_id END) AS latest_event,
                MAX(CASE WHEN flags & 2 THEN event_id END) AS first_setter
            FROM issue_occurrences_new WHERE \(filter) GROUP BY issue_id) a
        """
    }

    /// The issues matching `filter` (a condition on `issues i`; `pendingFilter` limits the staged rows read)
    /// with their staged occurrences counted: the columns of ``IssueQueries/columns``.
    static func issues(where filter: String = "1", pendingFilter: String = "1") -> String {
        """
        SELECT i.id AS id, i.fingerprint AS fingerprint, i.title AS title, i.subtitle AS subtitle, i.level AS level,
            i.mechanism AS mechanism, i.state AS state, i.resolved_in_release AS resolved_in_release,
            i.resolved_at AS resolved_at, i.muted_until AS muted_until, i.muted_for AS muted_for,
            min(i.first_seen, coalesce(p.first_time, i.first_seen)) AS first_seen,
            max(i.last_seen, coalesce(p.last_time, i.last_seen)) AS last_seen,
            i.occurrences + coalesce(p.n, 0) AS occurrences, i.users + coalesce(p.new_users, 0) AS users,
            CASE WHEN p.first_setter IS NULL THEN i.first_release ELSE p.setter_release END AS first_release,
            CASE WHEN p.latest_event IS NULL THEN i.last_release ELSE p.latest_release END AS last_release,
            coalesce(p.latest_event, i.latest_event_id) AS latest_event_id, i.culprit AS culprit, i.app AS app,
            i.short_id AS short_id
        FROM issues i LEFT JOIN (\(aggregate(where: pendingFilter))) p ON p.issue_id = i.id
        WHERE \(filter)
        """
    }

    /// Adds the staged rows to their issues' counters and counts per release, and moves them into
    /// `issue_occurrences`, sorted by issue (the store's lock held, inside a transaction).
    static func fold(_ db: SQLiteDatabase) throws {
        try db.execute(
            """
            UPDATE issues SET occurrences = occurrences + p.n, users = users + p.new_users,
                first_seen = min(first_seen, p.first_time), last_seen = max(last_seen, p.last_time),
                first_release = CASE WHEN p.first_setter IS NULL THEN first_release ELSE p.setter_release END,
                last_release = CASE WHEN p.latest_event IS NULL THEN last_release ELSE p.latest_release END,
                latest_event_id = coalesce(p.latest_event, latest_event_id)
            FROM (\(aggregate())) AS p WHERE p.issue_id = issues.id;
            INSERT INTO issue_releases(issue_id, release, count)
                SELECT issue_id, release, COUNT(*) FROM issue_occurrences_new WHERE release IS NOT NULL
                GROUP BY issue_id, release
                ON CONFLICT(issue_id, release) DO UPDATE SET count = count + excluded.count;
            INSERT OR REPLACE INTO issue_occurrences(event_id, issue_id, time, distinct_id, release)
            SELECT event_id, issue_id, time, distinct_id, release FROM issue_occurrences_new ORDER BY issue_id, time;
            DELETE FROM issue_occurrences_new;
            """)
    }

    /// A database of an earlier collector counted its staged rows as they arrived: they move without being
    /// counted again, and the staging table gains `flags` (before anything else touches it).
    static func upgrade(_ db: SQLiteDatabase) throws {
        var columns: Set<String> = []
        try db.prepare("PRAGMA table_info(issue_occurrences_new)").rows { row in
            if let name = row.text(1) { columns.insert(name) }
            return true
        }
        guard !columns.contains("flags") else { return }
        try db.transaction {
            try db.execute(
                """
                INSERT OR REPLACE INTO issue_occurrences(event_id, issue_id, time, distinct_id, release)
                SELECT event_id, issue_id, time, distinct_id, release FROM issue_occurrences_new;
                DELETE FROM issue_occurrences_new;
                ALTER TABLE issue_occurrences_new ADD COLUMN flags INTEGER NOT NULL DEFAULT 0;
                """)
        }
    }
}
