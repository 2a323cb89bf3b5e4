import CohorlySQLite

/// State changes of issues, each stored in `issue_transitions` with its time (the store's lock held, inside a
/// transaction). The rules an arriving occurrence follows (docs/issues.md "States"):
///
/// - resolved in release R: regressed when the occurrence's release comes after R (``ReleaseOrder``); from R
///   itself, an earlier release or no release it stays resolved.
/// - resolved without a release: regressed when the occurrence's crash time is after the resolve.
/// - muted until T: open again with the first occurrence arriving at or after T.
/// - muted for N occurrences: each occurrence counts one down; the Nth makes it open again.
final class IssueTransitionWriter {
    private let db: SQLiteDatabase
    private let insert: SQLiteStatement
    private let setState: SQLiteStatement
    private let countDown: SQLiteStatement
    private let rank: SQLiteStatement

    init(_ db: SQLiteDatabase) throws {
        self.db = db
        insert = try db.prepare(
            "INSERT INTO issue_transitions(issue_id, from_state, to_state, time, release, note) VALUES (?,?,?,?,?,?)")
        setState = try db.prepare(
            """
            UPDATE issues SET state = ?, resolved_in_release = ?, resolved_at = ?, muted_until = ?, muted_for = ?
            WHERE id = ?
            """)
        countDown = try db.prepare("UPDATE issues SET muted_for = ? WHERE id = ?")
        rank = try db.prepare("SELECT rank FROM issue_release_order WHERE name = ?")
    }

    /// The release's arrival rank (nil: never seen).
    func arrivalRank(_ release: String) throws -> Int64? {
        var found: Int64?
        try rank.rows([.text(release)]) { row in
            found = row.int(0)
            return false
        }
        return found
    }

    /// Moves `issue` to `target`, clearing what the old state kept; `now` unix seconds.
    func change(
        _ issue: StoredIssueState, to target: StoredIssueState, now: Int64, release: String?, note: String
    ) throws {
        try setState.run([
            .text(target.state.rawValue), target.resolvedInRelease.map { .text($0) } ?? .null,
            target.resolvedAt.map { .int($0) } ?? .null, target.mutedUntil.map { .int($0) } ?? .null,
            target.mutedFor.map { .int($0) } ?? .null, .int(issue.id),
        ])
        try insert.run([
            .int(issue.id), .text(issue.state.rawValue), .text(target.state.rawValue), .int(now),
            release.map { .text($0) } ?? .null, .text(note),
        ])
    }

    /// Applies the arrival rules to `issue` for `occurrence` (event `eventId`, arrived at `arrival` unix ms);
    /// returns the issue's state after it.
    func afterOccurrence(_ issue: StoredIssueState, _ occurrence: IssueOccurrence, eventId: Int64, arrival: Int64)
        throws -> StoredIssueState
    {
        let now = arrival / 1000
        let open = StoredIssueState(id: issue.id)
        switch issue.state {
        case .open, .regressed: return issue
        case .resolved:
            var regressed = open
            regressed.state = .regressed
            if let resolved = issue.resolvedInRelease {
                guard let release = occurrence.release,
                    try ReleaseOrder.isLater(release, than: resolved, arrival: arrivalRank(_:))
                else { return issue }
                try change(
                    issue, to: regressed, now: now, release: release,
                    note: "occurrence \(eventId) from release \(release), after \(resolved)")
                return regressed
            } else if let resolvedAt = issue.resolvedAt, occurrence.time > resolvedAt {
                try change(
                    issue, to: regressed, now: now, release: occurrence.release,
                    note: "occurrence \(eventId) after the resolve")
                return regressed
            }
            return issue
        case .muted:
            if let until = issue.mutedUntil, now >= until {
                try change(issue, to: open, now: now, release: occurrence.release, note: "mute ended: seen after it")
                return open
            } else if let left = issue.mutedFor {
                if left <= 1 {
                    try change(
                        issue, to: open, now: now, release: occurrence.release,
                        note: "mute ended: occurrence \(eventId) was the last one muted")
                    return open
                }
                try countDown.run([.int(left - 1), .int(issue.id)])
                var counted = issue
                counted.mutedFor = left - 1
                return counted
            }
            return issue
        }
    }
}
