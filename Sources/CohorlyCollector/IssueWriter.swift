import CSQLite
import CohorlySQLite

/// Files occurrences into their issues, inside the transaction that stores their events (the store's lock
/// held). One writer lives as long as the store's connection: its statements are prepared once, and it keeps
/// which fingerprint is which issue and which (issue, user) pairs are stored, so an occurrence of a known issue
/// by a known user costs no lookup. A request's occurrences are filed per issue: one counter update per issue
/// and one count per (issue, release), whatever the number of its occurrences. An occurrence arriving changes
/// the state where the rules say (docs/issues.md "States"): a resolved issue regresses, a mute ends; each
/// change is stored as a transition at the occurrence's arrival.
///
/// At ingestion the occurrence rows go to `issue_occurrences_new` (no index but its row id) and are moved into
/// `issue_occurrences` in bulk, sorted by issue, once ``stagedLimit`` are there: the (issue, time) index then
/// takes a thousand rows in one pass over its pages instead of a page write per issue per request
/// (IssueStore.swift). Regrouping writes to `issue_occurrences` itself, after moving the staged rows.
final class IssueWriter {
    /// Staged occurrence rows that trigger the move into `issue_occurrences`.
    static let stagedLimit = 4096
    /// Entries the caches keep before they start over.
    static let cacheLimit = 100_000

    private let db: SQLiteDatabase
    private let staged: Bool
    private let stagedLimit: Int
    private let find: SQLiteStatement
    private let create: SQLiteStatement
    private let link: SQLiteStatement
    private let addUser: SQLiteStatement
    private let seeRelease: SQLiteStatement
    private let countRelease: SQLiteStatement
    private let count: SQLiteStatement
    private let raw: SQLiteStatement
    private let transitions: IssueTransitionWriter
    /// Fingerprint → issue id of the issues this writer met (issue ids are never reused).
    private var ids: [String: Int64] = [:]
    /// (issue, distinct id) pairs known to be in `issue_users`.
    private var users: Set<IssueUser> = []
    /// Releases known to be in `issue_release_order`.
    private var seenReleases: Set<String> = []
    /// Rows in `issue_occurrences_new` (nil: not counted yet).
    private var stagedRows: Int?

    /// A writer on `db`; `staged` false writes occurrence rows straight into `issue_occurrences` (regrouping).
    init(_ db: SQLiteDatabase, staged: Bool = true, stagedLimit: Int = IssueWriter.stagedLimit) throws {
        self.db = db
        self.staged = staged
        self.stagedLimit = stagedLimit
        find = try db.prepare("SELECT id FROM issues WHERE fingerprint = ?")
        create = try db.prepare(
            """
            INSERT INTO issues(fingerprint, title, subtitle, level, mechanism, state, first_seen, last_seen,
                occurrences, users, first_release, last_release, latest_event_id, culprit)
            VALUES (?,?,?,?,?,'open',?,?,0,0,?,?,?,?)
            """)
        link = try db.prepare(
            "INSERT OR REPLACE INTO \(staged ? "issue_occurrences_new" : "issue_occurrences")"
                + "(event_id, issue_id, time, distinct_id, release) VALUES (?,?,?,?,?)")
        addUser = try db.prepare("INSERT OR IGNORE INTO issue_users(issue_id, distinct_id) VALUES (?,?)")
        seeRelease = try db.prepare("INSERT OR IGNORE INTO issue_release_order(name) VALUES (?)")
        countRelease = try db.prepare(
            """
            INSERT INTO issue_releases(issue_id, release, count) VALUES (?,?,?)
            ON CONFLICT(issue_id, release) DO UPDATE SET count = count + excluded.count
            """)
        // One issue's occurrences of one request at once, as if they came one by one in order (the right-hand
        // sides read the row before the update): ?3 the earliest crash time, ?4 the first release from the
        // earliest occurrence on, ?5 the first release of all (for an issue whose first occurrence had none);
        // ?6 the latest crash time, ?7 / ?8 the release and event of the last occurrence at that time.
        count = try db.prepare(
            """
            UPDATE issues SET occurrences = occurrences + ?1, users = users + ?2,
                first_release = CASE WHEN ?3 < first_seen THEN ?4 WHEN first_release IS NULL THEN ?5
                    ELSE first_release END,
                first_seen = min(first_seen, ?3),
                last_release = CASE WHEN ?6 >= last_seen THEN ?7 ELSE last_release END,
                latest_event_id = CASE WHEN ?6 >= last_seen THEN ?8 ELSE latest_event_id END,
                last_seen = max(last_seen, ?6)
            WHERE id = ?9
            RETURNING id, state, resolved_in_release, resolved_at, muted_until, muted_for
            """)
        raw = try db.prepare("INSERT OR IGNORE INTO issue_raw(build_id, event_id) VALUES (?,?)")
        transitions = try IssueTransitionWriter(db)
    }

    /// Files the stored events (each `eventId` with its occurrence) under their issues, created when new, in
    /// order. `arrival`: unix ms. Returns each one's issue id, in the order given.
    @discardableResult
    func record(_ batch: [(occurrence: IssueOccurrence, eventId: Int64)], arrival: Int64, changesState: Bool = true)
        throws -> [Int64]
    {
        var groups: [[Int]] = []
        var groupOf: [String: Int] = [:]
        for (index, entry) in batch.enumerated() {
            let fingerprint = entry.occurrence.key.fingerprint
            if let group = groupOf[fingerprint] {
                groups[group].append(index)
            } else {
                groupOf[fingerprint] = groups.count
                groups.append([index])
            }
        }
        for entry in batch {
            if let name = entry.occurrence.release, seenReleases.insert(name).inserted {
                try seeRelease.run([.text(name)])
            }
        }
        var issueIds = Array(repeating: Int64(0), count: batch.count)
        for group in groups {
            let entries = group.map { batch[$0] }
            let id = try issueId(for: entries[0].occurrence, eventId: entries[0].eventId)
            for index in group { issueIds[index] = id }
            let issue = try file(entries, under: id)
            if changesState {
                var state = issue
                for entry in entries {
                    state = try transitions.afterOccurrence(
                        state, entry.occurrence, eventId: entry.eventId, arrival: arrival)
                }
            }
        }
        if staged, try countStaged() >= stagedLimit {
            try Self.moveStaged(db)
            stagedRows = 0
        }
        return issueIds
    }

    /// Moves the staged occurrence rows into `issue_occurrences`, sorted by issue (the store's lock held).
    static func moveStaged(_ db: SQLiteDatabase) throws {
        try db.execute(
            """
            INSERT OR REPLACE INTO issue_occurrences(event_id, issue_id, time, distinct_id, release)
            SELECT event_id, issue_id, time, distinct_id, release FROM issue_occurrences_new ORDER BY issue_id, time;
            DELETE FROM issue_occurrences_new;
            """)
    }

    /// The id of the occurrence's issue, created from it when there is none.
    private func issueId(for occurrence: IssueOccurrence, eventId: Int64) throws -> Int64 {
        let key = occurrence.key
        if let id = ids[key.fingerprint] { return id }
        var found: Int64?
        try find.rows([.text(key.fingerprint)]) { row in
            found = row.int(0)
            return false
        }
        let id: Int64
        if let found {
            id = found
        } else {
            let release: SQLiteStatement.Value = occurrence.release.map { .text($0) } ?? .null
            try create.run([
                .text(key.fingerprint), .text(key.title), .text(key.subtitle), .text(key.level), .text(key.mechanism),
                .int(occurrence.time), .int(occurrence.time), release, release, .int(eventId), .text(key.culprit),
            ])
            id = db.lastInsertRowID
        }
        if ids.count >= Self.cacheLimit { ids.removeAll() }
        ids[key.fingerprint] = id
        return id
    }

    /// Stores the occurrence rows, users, releases and counters of one issue's `entries` (in arrival order);
    /// returns the issue's state.
    private func file(_ entries: [(occurrence: IssueOccurrence, eventId: Int64)], under id: Int64) throws
        -> StoredIssueState
    {
        var newUsers: Int64 = 0
        var releases: [(name: String, count: Int64)] = []
        var earliest = entries[0]
        var latest = entries[0]
        let firstRelease = entries.first { $0.occurrence.release != nil }?.occurrence.release
        for entry in entries {
            let occurrence = entry.occurrence
            let release: SQLiteStatement.Value = occurrence.release.map { .text($0) } ?? .null
            try link.run([.int(entry.eventId), .int(id), .int(occurrence.time), .text(occurrence.distinctId), release])
            if !occurrence.distinctId.isEmpty, !users.contains(IssueUser(issue: id, distinctId: occurrence.distinctId))
            {
                try addUser.run([.int(id), .text(occurrence.distinctId)])
                newUsers += Int64(db.changes)
                if users.count >= Self.cacheLimit { users.removeAll() }
                users.insert(IssueUser(issue: id, distinctId: occurrence.distinctId))
            }
            if let name = occurrence.release {
                if let known = releases.firstIndex(where: { $0.name == name }) {
                    releases[known].count += 1
                } else {
                    releases.append((name, 1))
                }
            }
            for buildId in occurrence.key.rawBuildIds { try raw.run([.text(buildId), .int(entry.eventId)]) }
            if occurrence.time < earliest.occurrence.time { earliest = entry }
            if occurrence.time >= latest.occurrence.time { latest = entry }
        }
        if staged { stagedRows = stagedRows.map { $0 + entries.count } }
        for release in releases { try countRelease.run([.int(id), .text(release.name), .int(release.count)]) }
        // The first release from the earliest occurrence on (in arrival order), else none.
        let fromEarliest = entries.drop { $0.eventId != earliest.eventId }
        let earliestRelease = fromEarliest.first { $0.occurrence.release != nil }?.occurrence.release
        var state = StoredIssueState(id: id)
        let text: (String?) -> SQLiteStatement.Value = { $0.map { .text($0) } ?? .null }
        try count.rows([
            .int(Int64(entries.count)), .int(newUsers), .int(earliest.occurrence.time), text(earliestRelease),
            text(firstRelease), .int(latest.occurrence.time), text(latest.occurrence.release), .int(latest.eventId),
            .int(id),
        ]) { row in
            state = StoredIssueState(row)
            return true
        }
        return state
    }

    /// Rows in `issue_occurrences_new`, counted once per writer and kept up to date.
    private func countStaged() throws -> Int {
        if stagedRows == nil {
            try db.prepare("SELECT COUNT(*) FROM issue_occurrences_new").rows { row in
                stagedRows = Int(row.int(0))
                return false
            }
        }
        return stagedRows ?? 0
    }
}

/// One (issue, distinct id) pair of `issue_users`.
private struct IssueUser: Hashable {
    var issue: Int64
    var distinctId: String
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
