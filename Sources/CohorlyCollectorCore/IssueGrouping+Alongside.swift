import Foundation

/// A request's events are grouped on a second thread while the request's own thread writes their properties'
/// JSON text, the larger of the two jobs (34 µs against 12 µs an event of 8 frames, a release build): one sender's
/// batches are then stored nearer the speed of no grouping (scripts/bench-collector --issues: 0.89× and 0.91× the
/// events/s of `--no-issues`, against 0.83× grouping after the writing; serve CPU 0.78–0.79× against 0.80×, the
/// hand-off and the trees read on a second core; BENCHMARKS.md "Issues", session 12). On a machine whose cores are
/// all busy the CPU ratio is what is left.
///
/// The two threads take the events from opposite ends (the grouping from the last), so an event's parsed tree is
/// read by one of them at a time: its reference counts are not written from two cores at once.
extension IssueGrouping {
    /// Requests with fewer `$exception`s than this group on their own thread: handing the work over costs about
    /// what grouping one or two events does.
    static let alongsideMinimum = 8

    /// `work`'s result, run on this thread, and ``occurrences(for:)`` of `events`, found on another one meanwhile
    /// when there are enough `$exception`s to pay for the hand-off. If no thread has taken the grouping by the
    /// time `work` ends (the pool is busy), this thread does it: it never waits for a thread to become free.
    /// `dispatch` runs a block on another thread (tests run it at once, or never).
    func occurrences<Output>(
        for events: [CollectorStore.NewEvent], alongside work: () -> Output,
        dispatch: (@escaping @Sendable () -> Void) -> Void = { DispatchQueue.global().async(execute: $0) }
    ) -> (Output, [IssueOccurrence?]) {
        let exceptions = enabled ? events.reduce(0) { $0 + ($1.event == "$exception" ? 1 : 0) } : 0
        guard exceptions >= Self.alongsideMinimum else { return (work(), occurrences(for: events)) }
        let grouping = AlongsideGrouping()
        dispatch {
            guard grouping.claim() else { return }
            grouping.finish(Array(self.occurrences(for: events.reversed()).reversed()))
        }
        let output = work()
        if grouping.claim() { return (output, occurrences(for: events)) }
        return (output, grouping.wait())
    }
}

/// One request's grouping on another thread: claimed once, by that thread or by the request's when it gets there
/// first.
private final class AlongsideGrouping: @unchecked Sendable {
    private let lock = NSLock()
    // Under `lock`.
    private var claimed = false
    private var found: [IssueOccurrence?] = []
    private let done = DispatchSemaphore(value: 0)

    /// Whether the caller is the first to claim the grouping (and must do it).
    func claim() -> Bool {
        lock.withLock {
            defer { claimed = true }
            return !claimed
        }
    }

    /// The claiming thread's result.
    func finish(_ occurrences: [IssueOccurrence?]) {
        lock.withLock { found = occurrences }
        done.signal()
    }

    /// The result, once the thread that claimed it has finished (it always does: grouping neither blocks nor
    /// waits for anything).
    func wait() -> [IssueOccurrence?] {
        done.wait()
        return lock.withLock { found }
    }
}

extension CollectorStore {
    /// Inserts `events` whose columns' text is still to be written (``NewEvent/prepared()``: an ingestion route's
    /// parsed events), all or none: the texts are written while their issue occurrences are found
    /// (``IssueGrouping/occurrences(for:alongside:)``). Returns how many were new, as
    /// ``insert(events:occurrences:receivedAt:)``.
    package func insert(writing events: [NewEvent], receivedAt: Int64) throws -> Int {
        let (written, occurrences) = issues.occurrences(for: events) { events.map { $0.prepared() } }
        return try insert(events: written, occurrences: occurrences, receivedAt: receivedAt)
    }
}
