import CSQLite
import CohorlySQLite

/// Files occurrences into their issues, inside the transaction that stores their events (the store's lock
/// held). One writer lives as long as the store's connection: its statements are prepared once, and it keeps
/// which fingerprint is which issue, each issue's state and which (issue, user) pairs are stored, so an
/// occurrence of a known issue by a known user costs one row. An occurrence arriving changes the state where
/// the rules say (docs/issues.md "States"): a resolved issue regresses, a mute ends; each change is stored as a
/// transition at the occurrence's arrival.
///
/// At ingestion the occurrence rows go to `issue_occurrences_new` (no index but its row id) and are moved into
/// `issue_occurrences` in bulk, sorted by issue, once ``stagedLimit`` are there: the (issue, time) index then
/// takes a thousand rows in one pass over its pages instead of a page write per issue per request
/// (IssueStore.swift), and the issues' counters take them in one update per issue (IssuePending.swift) instead
/// of one per issue per request. A writer that does not stage (regrouping) moves its rows at once.
final class IssueWriter {
    /// Staged occurrence rows that trigger the move into `issue_occurrences`. A move touches most pages of the
    /// (issue, time) index whatever its size, so fewer, larger moves write less (4,096 cost ~0.5 s more CPU per
    /// 100,000 events); reads add the rows waiting (the list of 1,000 issues with 16,000 waiting:
    /// p99 25 ms, against 13–15 ms just after a move; scripts/bench-collector).
    static let stagedLimit = 16384
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
    private let readState: SQLiteStatement
    private let raw: SQLiteStatement
    private let tag: SQLiteStatement
    private let transitions: IssueTransitionWriter
    private let shortIds: ShortIdNumbers
    private let addText: SQLiteStatement
    private let functions: IssueFunctionWriter
    /// (App, fingerprint) → issue id of the issues this writer met (issue ids are never reused).
    private var ids: [IssueKey.Identity: Int64] = [:]
    /// The issues this writer met: state, first and last seen (actions forget the writer: IssueActions.swift).
    private var known: [Int64: KnownIssue] = [:]
    /// (issue, distinct id) pairs known to be in `issue_users`.
    private var users: Set<IssueUser> = []
    /// Releases known to be in `issue_release_order`.
    private var seenReleases: Set<String> = []
    /// Rows in `issue_occurrences_new` (nil: not counted yet).
    private var stagedRows: Int?

    /// A writer on `db`; `staged` false moves occurrence rows into `issue_occurrences` as it files them
    /// (regrouping).
    init(_ db: SQLiteDatabase, staged: Bool = true, stagedLimit: Int = IssueWriter.stagedLimit) throws {
        self.db = db
        self.staged = staged
        self.stagedLimit = stagedLimit
        find = try db.prepare("SELECT id FROM issues WHERE app = ? AND fingerprint = ?")
        create = try db.prepare(
            """
            INSERT INTO issues(fingerprint, title, subtitle, level, mechanism, state, first_seen, last_seen,
                occurrences, users, first_release, last_release, latest_event_id, culprit, app, short_id)
            VALUES (?,?,?,?,?,'open',?,?,0,0,?,?,?,?,?,?)
            """)
        link = try db.prepare(
            "INSERT OR REPLACE INTO issue_occurrences_new(event_id, issue_id, time, distinct_id, release, flags)"
                + " VALUES (?,?,?,?,?,?)")
        addUser = try db.prepare("INSERT OR IGNORE INTO issue_users(issue_id, distinct_id) VALUES (?,?)")
        seeRelease = try db.prepare("INSERT OR IGNORE INTO issue_release_order(name) VALUES (?)")
        let issue = IssuePending.issues(where: "i.id = ?1", pendingFilter: "issue_id = ?1")
        readState = try db.prepare(
            "SELECT id, state, resolved_in_release, resolved_at, muted_until, muted_for, first_seen, last_seen,"
                + " first_release IS NOT NULL FROM (\(issue))")
        raw = try db.prepare("INSERT OR IGNORE INTO issue_raw(build_id, event_id) VALUES (?,?)")
        tag = try db.prepare(OccurrenceTags.insertSQL)
        transitions = try IssueTransitionWriter(db)
        shortIds = try ShortIdNumbers(db)
        addText = try db.prepare(
            "INSERT OR REPLACE INTO issue_texts(issue_id, text) SELECT id, \(IssueTexts.expression) FROM issues WHERE id = ?"
        )
        functions = try IssueFunctionWriter(db)
    }

    /// Files the stored events (each `eventId` with its occurrence) under their issues, created when new, in
    /// order. `arrival`: unix ms. Returns each one's issue id, in the order given.
    @discardableResult
    func record(_ batch: [(occurrence: IssueOccurrence, eventId: Int64)], arrival: Int64, changesState: Bool = true)
        throws -> [Int64]
    {
        var groups: [[Int]] = []
        var groupOf: [IssueKey.Identity: Int] = [:]
        for (index, entry) in batch.enumerated() {
            let identity = entry.occurrence.key.identity
            if let group = groupOf[identity] {
                groups[group].append(index)
            } else {
                groupOf[identity] = groups.count
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
            var issue = try knownIssue(id)
            try file(entries, under: id, &issue)
            if changesState {
                for entry in entries {
                    issue.state = try transitions.afterOccurrence(
                        issue.state, entry.occurrence, eventId: entry.eventId, arrival: arrival)
                }
            }
            known[id] = issue
        }
        if try !staged || countStaged() >= stagedLimit {
            try Self.moveStaged(db)
            stagedRows = 0
        }
        return issueIds
    }

    /// Counts the staged occurrence rows into their issues and moves them into `issue_occurrences`, sorted by
    /// issue (the store's lock held, inside a transaction).
    static func moveStaged(_ db: SQLiteDatabase) throws { try IssuePending.fold(db) }

    /// Issue `id` as stored with its staged rows (known, or read once).
    private func knownIssue(_ id: Int64) throws -> KnownIssue {
        if let issue = known[id] { return issue }
        var found = KnownIssue(state: StoredIssueState(id: id), firstSeen: .max, lastSeen: .min, hasFirstRelease: false)
        try readState.rows([.int(id)]) { row in
            found = KnownIssue(
                state: StoredIssueState(row), firstSeen: row.int(6), lastSeen: row.int(7),
                hasFirstRelease: row.int(8) != 0)
            return false
        }
        if known.count >= Self.cacheLimit { known.removeAll() }
        known[id] = found
        return found
    }

    /// The id of the occurrence's issue, created from it when there is none.
    private func issueId(for occurrence: IssueOccurrence, eventId: Int64) throws -> Int64 {
        let key = occurrence.key
        if let id = ids[key.identity] { return id }
        var found: Int64?
        try find.rows([.text(key.app), .text(key.fingerprint)]) { row in
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
                .text(key.app), .text(try shortIds.next(app: key.app)),
            ])
            id = db.lastInsertRowID
            try addText.run([.int(id)])
            known[id] = KnownIssue(
                state: StoredIssueState(id: id), firstSeen: occurrence.time, lastSeen: occurrence.time,
                hasFirstRelease: occurrence.release != nil)
        }
        if ids.count >= Self.cacheLimit { ids.removeAll() }
        ids[key.identity] = id
        return id
    }

    /// Stages the occurrence rows of one issue's `entries` (in arrival order), each with what it changes of
    /// `issue` (IssuePending.swift), the users they bring and its tags (OccurrenceTags.swift).
    private func file(
        _ entries: [(occurrence: IssueOccurrence, eventId: Int64)], under id: Int64, _ issue: inout KnownIssue
    ) throws {
        for entry in entries {
            let occurrence = entry.occurrence
            var flags: Int64 = 0
            if occurrence.time < issue.firstSeen {
                issue.firstSeen = occurrence.time
                issue.hasFirstRelease = occurrence.release != nil
                flags |= IssuePending.Flag.firstRelease
            } else if !issue.hasFirstRelease && occurrence.release != nil {
                issue.hasFirstRelease = true
                flags |= IssuePending.Flag.firstRelease
            }
            if occurrence.time >= issue.lastSeen {
                issue.lastSeen = occurrence.time
                flags |= IssuePending.Flag.latest
            }
            if !occurrence.distinctId.isEmpty, !users.contains(IssueUser(issue: id, distinctId: occurrence.distinctId))
            {
                try addUser.run([.int(id), .text(occurrence.distinctId)])
                if db.changes > 0 { flags |= IssuePending.Flag.newUser }
                if users.count >= Self.cacheLimit { users.removeAll() }
                users.insert(IssueUser(issue: id, distinctId: occurrence.distinctId))
            }
            let release: SQLiteStatement.Value = occurrence.release.map { .text($0) } ?? .null
            try link.run([
                .int(entry.eventId), .int(id), .int(occurrence.time), .text(occurrence.distinctId), release,
                .int(flags),
            ])
            for buildId in occurrence.key.rawBuildIds { try raw.run([.text(buildId), .int(entry.eventId)]) }
            if !occurrence.tags.isEmpty { try tag.run(occurrence.tags.row(eventId: entry.eventId)) }
            try functions.add(occurrence.functions, issue: id)
        }
        stagedRows = stagedRows.map { $0 + entries.count }
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

/// What the writer keeps of an issue it met.
private struct KnownIssue {
    var state: StoredIssueState
    /// Crash times, unix ms, with the staged rows.
    var firstSeen: Int64
    var lastSeen: Int64
    /// Whether it has a first release.
    var hasFirstRelease: Bool
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
