import CohorlySQLite

/// The write side of issues: what `cohorly issues resolve|reopen|mute` (through `POST /api/issues/<id>/…`) and
/// the web page do. Each action is one transaction that changes the state and stores the transition; `now` is
/// unix seconds.
struct IssueActions: Sendable {
    let store: CollectorStore

    /// Resolves the issue now, or in release `inRelease` (then only an occurrence from a later release regresses
    /// it; a release no occurrence had yet is recorded now, for arrival order).
    func resolve(id: Int64, inRelease: String?, now: Int64) throws {
        if let inRelease, inRelease.isEmpty { throw IssueError.invalid("the release to resolve in is empty") }
        try change(id: id, now: now, release: inRelease) { _ in
            var target = StoredIssueState(id: id)
            target.state = .resolved
            target.resolvedInRelease = inRelease
            target.resolvedAt = now * 1000
            return (target, inRelease.map { "resolved in release \($0)" } ?? "resolved")
        }
    }

    /// Makes the issue open again, whatever its state.
    func reopen(id: Int64, now: Int64) throws {
        try change(id: id, now: now, release: nil) { _ in (StoredIssueState(id: id), "reopened") }
    }

    /// Mutes the issue until `until` (unix seconds, in the future), for `forOccurrences` more occurrences (≥ 1),
    /// or both (whichever comes first ends it).
    /// 9999-12-31T23:59:59Z in unix seconds: the latest end a mute may have.
    static let latestMuteEnd: Int64 = 253_402_300_799

    func mute(id: Int64, until: Int64?, forOccurrences: Int?, now: Int64) throws {
        guard until != nil || forOccurrences != nil else {
            throw IssueError.invalid("a mute needs an end: a date (until) or a number of occurrences")
        }
        if let until, until <= now { throw IssueError.invalid("the mute's end must be in the future") }
        // From a request: bounded before it is ever turned into milliseconds (`until * 1000` would trap).
        if let until, until > Self.latestMuteEnd {
            throw IssueError.invalid(
                "the mute's end must be before the year 10000 (unix seconds ≤ \(Self.latestMuteEnd))")
        }
        if let forOccurrences, forOccurrences < 1 {
            throw IssueError.invalid("the number of occurrences to mute for must be at least 1")
        }
        var parts: [String] = []
        if let until { parts.append("until \(RFC3339.format(milliseconds: until * 1000))") }
        if let forOccurrences { parts.append("for \(forOccurrences) occurrence\(forOccurrences == 1 ? "" : "s")") }
        try change(id: id, now: now, release: nil) { _ in
            var target = StoredIssueState(id: id)
            target.state = .muted
            target.mutedUntil = until
            target.mutedFor = forOccurrences.map(Int64.init)
            return (target, "muted " + parts.joined(separator: " or "))
        }
    }

    /// Reads the issue's state, asks `decide` for the new one, stores both (throws ``IssueError/unknownIssue``).
    private func change(
        id: Int64, now: Int64, release: String?,
        _ decide: (StoredIssueState) -> (StoredIssueState, String)
    ) throws {
        try store.lock.withLock {
            try store.db.transaction {
                var current: StoredIssueState?
                try store.db.prepare(
                    "SELECT id, state, resolved_in_release, resolved_at, muted_until, muted_for FROM issues WHERE id = ?"
                ).rows([.int(id)]) { row in
                    current = StoredIssueState(row)
                    return false
                }
                guard let current else { throw IssueError.unknownIssue(id) }
                if let release {
                    try store.db.prepare("INSERT OR IGNORE INTO issue_release_order(name) VALUES (?)").run([
                        .text(release)
                    ])
                }
                let (target, note) = decide(current)
                try IssueTransitionWriter(store.db).change(current, to: target, now: now, release: release, note: note)
            }
            // The issue writer knows the state it had.
            store.forgetIssueWriter()
        }
    }
}
