import Foundation

/// The inserts of requests that arrive while another commits (CollectorStore.insert(together:)).
final class GroupCommit: @unchecked Sendable {
    /// One request's rows and, once committed, its result.
    final class Ticket {
        let rows: CollectorStore.Rows
        let occurrences: [IssueOccurrence?]
        /// Set under the group's condition.
        var result: Result<Int, any Error>?

        init(_ rows: CollectorStore.Rows, _ occurrences: [IssueOccurrence?]) {
            self.rows = rows
            self.occurrences = occurrences
        }
    }

    let condition = NSCondition()
    // Under `condition`.
    var waiting: [Ticket] = []
    var committing = false
    /// Transactions committed or tried (under the store's lock).
    var transactions = 0

    /// Requests waiting for a commit to hold their rows.
    var waitingCount: Int { condition.withLock { waiting.count } }
    /// Whether a request is committing.
    var isCommitting: Bool { condition.withLock { committing } }
}

extension CollectorStore {
    /// The records kind release-health session updates are stored under (read with `GET /api/sessions`); the
    /// name the first wire to send them stored them under, kept so existing databases read the same.
    package static let sessionRecordKind = "sentry_session"

    /// One request's rows: events (deduplicated by `$insert_id`, `$exception`s filed under their issues) and
    /// records of one kind.
    package struct Rows {
        package var events: [NewEvent] = []
        package var records: [(token: String, json: String)] = []
        package var recordKind = ""
        package var receivedAt: Int64

        package init(
            events: [NewEvent] = [], records: [(token: String, json: String)] = [], recordKind: String = "",
            receivedAt: Int64
        ) {
            self.events = events
            self.records = records
            self.recordKind = recordKind
            self.receivedAt = receivedAt
        }
    }

    /// Inserts `rows`, all or none, in one transaction with the rows of the requests that wait meanwhile (group
    /// commit): a request that finds no commit running commits its own and every waiting one's rows at once, and
    /// each request returns once the commit that holds its rows is done. Returns how many events were new; when
    /// the shared transaction fails, each of its requests throws its error.
    /// Concurrent one-event requests (a wire that sends one event per request) then cost one commit per group,
    /// not one each.
    package func insert(together rows: Rows) throws -> Int {
        var rows = rows
        rows.events = rows.events.map { $0.prepared() }
        let ticket = GroupCommit.Ticket(rows, issues.occurrences(for: rows.events))
        let group = groupCommit
        group.condition.lock()
        group.waiting.append(ticket)
        while ticket.result == nil {
            guard !group.committing else {
                group.condition.wait()
                continue
            }
            group.committing = true
            let tickets = group.waiting
            group.waiting = []
            group.condition.unlock()
            let results = commit(tickets)
            group.condition.lock()
            for (ticket, result) in zip(tickets, results) { ticket.result = result }
            group.committing = false
            group.condition.broadcast()
        }
        group.condition.unlock()
        return try ticket.result?.get() ?? 0
    }

    /// Commits `tickets` in one transaction; when it fails, each of them fails with its error (nothing of theirs
    /// is stored; their senders retry).
    private func commit(_ tickets: [GroupCommit.Ticket]) -> [Result<Int, any Error>] {
        lock.withLock {
            let result = Result {
                try db.transaction {
                    try tickets.map { ticket in
                        let rows = ticket.rows
                        let inserted = try insertLocked(rows.events, ticket.occurrences, receivedAt: rows.receivedAt)
                        if !rows.records.isEmpty {
                            _ = try insertLocked(rows.records, kind: rows.recordKind, receivedAt: rows.receivedAt)
                        }
                        return inserted
                    }
                }
            }
            groupCommit.transactions += 1
            if case .failure = result { forgetIssueWriter() }
            return tickets.indices.map { index in result.map { $0[index] } }
        }
    }
}
