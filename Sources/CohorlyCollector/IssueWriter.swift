import CSQLite
import CohorlySQLite

/// Files occurrences into their issues, inside the transaction that stores their events (the store's lock
/// held). Statements are prepared once per batch. An occurrence arriving changes the state where the rules say
/// (docs/issues.md "States"): a resolved issue regresses, a mute ends; each change is stored as a transition
/// at the occurrence's arrival.
final class IssueWriter {
    private let db: SQLiteDatabase
    private let find: SQLiteStatement
    private let create: SQLiteStatement
    private let link: SQLiteStatement
    private let addUser: SQLiteStatement
    private let seeRelease: SQLiteStatement
    private let countRelease: SQLiteStatement
    private let count: SQLiteStatement
    private let raw: SQLiteStatement
    private let transitions: IssueTransitionWriter
    /// Releases recorded in `issue_release_order` by this batch.
    private var seenReleases: Set<String> = []

    init(_ db: SQLiteDatabase) throws {
        self.db = db
        find = try db.prepare(
            "SELECT id, state, resolved_in_release, resolved_at, muted_until, muted_for FROM issues WHERE fingerprint = ?"
        )
        create = try db.prepare(
            """
            INSERT INTO issues(fingerprint, title, subtitle, level, mechanism, state, first_seen, last_seen,
                occurrences, users, first_release, last_release, latest_event_id, culprit)
            VALUES (?,?,?,?,?,'open',?,?,0,0,?,?,?,?)
            """)
        link = try db.prepare(
            "INSERT OR REPLACE INTO issue_occurrences(event_id, issue_id, time, distinct_id, release) VALUES (?,?,?,?,?)"
        )
        addUser = try db.prepare("INSERT OR IGNORE INTO issue_users(issue_id, distinct_id) VALUES (?,?)")
        seeRelease = try db.prepare("INSERT OR IGNORE INTO issue_release_order(name) VALUES (?)")
        countRelease = try db.prepare(
            """
            INSERT INTO issue_releases(issue_id, release, count) VALUES (?,?,1)
            ON CONFLICT(issue_id, release) DO UPDATE SET count = count + 1
            """)
        // Right-hand sides read the row before the update: the latest occurrence by (crash time, event id).
        count = try db.prepare(
            """
            UPDATE issues SET occurrences = occurrences + 1, users = users + ?1,
                first_release = CASE WHEN ?2 < first_seen OR first_release IS NULL THEN ?3 ELSE first_release END,
                first_seen = min(first_seen, ?2),
                last_release = CASE WHEN ?2 >= last_seen THEN ?3 ELSE last_release END,
                latest_event_id = CASE WHEN ?2 >= last_seen THEN ?4 ELSE latest_event_id END,
                last_seen = max(last_seen, ?2)
            WHERE id = ?5
            """)
        raw = try db.prepare("INSERT OR IGNORE INTO issue_raw(build_id, event_id) VALUES (?,?)")
        transitions = try IssueTransitionWriter(db)
    }

    /// Files the stored event `eventId` (its occurrence `occurrence`) under its issue, created when new.
    /// `arrival`: unix ms. Returns the issue's id.
    @discardableResult
    func record(_ occurrence: IssueOccurrence, eventId: Int64, arrival: Int64, changesState: Bool = true) throws
        -> Int64
    {
        let key = occurrence.key
        var found: StoredIssueState?
        try find.rows([.text(key.fingerprint)]) { row in
            found = StoredIssueState(row)
            return false
        }
        let release: SQLiteStatement.Value = occurrence.release.map { .text($0) } ?? .null
        let issue: StoredIssueState
        if let found {
            issue = found
        } else {
            try create.run([
                .text(key.fingerprint), .text(key.title), .text(key.subtitle), .text(key.level), .text(key.mechanism),
                .int(occurrence.time), .int(occurrence.time), release, release, .int(eventId), .text(key.culprit),
            ])
            issue = StoredIssueState(id: db.lastInsertRowID)
        }
        try link.run([.int(eventId), .int(issue.id), .int(occurrence.time), .text(occurrence.distinctId), release])
        var newUser: Int64 = 0
        if !occurrence.distinctId.isEmpty {
            try addUser.run([.int(issue.id), .text(occurrence.distinctId)])
            newUser = Int64(db.changes)
        }
        if let name = occurrence.release {
            if seenReleases.insert(name).inserted { try seeRelease.run([.text(name)]) }
            try countRelease.run([.int(issue.id), .text(name)])
        }
        try count.run([.int(newUser), .int(occurrence.time), release, .int(eventId), .int(issue.id)])
        for buildId in key.rawBuildIds { try raw.run([.text(buildId), .int(eventId)]) }
        if changesState {
            try transitions.afterOccurrence(issue, occurrence, eventId: eventId, arrival: arrival)
        }
        return issue.id
    }
}

/// The state columns of one issue row.
struct StoredIssueState {
    var id: Int64
    var state: IssueState = .open
    var resolvedInRelease: String?
    /// Unix ms.
    var resolvedAt: Int64?
    /// Unix seconds.
    var mutedUntil: Int64?
    var mutedFor: Int64?

    init(id: Int64) { self.id = id }

    /// From `SELECT id, state, resolved_in_release, resolved_at, muted_until, muted_for`.
    init(_ row: SQLiteStatement) {
        id = row.int(0)
        state = row.text(1).flatMap(IssueState.init(rawValue:)) ?? .open
        resolvedInRelease = row.text(2)
        resolvedAt = row.optionalInt(3)
        mutedUntil = row.optionalInt(4)
        mutedFor = row.optionalInt(5)
    }
}

extension SQLiteStatement {
    /// An integer column that may be NULL.
    func optionalInt(_ column: Int32) -> Int64? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : int(column)
    }
}
