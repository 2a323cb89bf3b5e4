import Foundation
import Synchronization

/// Events made off the caller's thread: the caller reserves a ticket (stamped with the time, distinct id and
/// super properties of that moment), a background worker builds the event (CohorlyCrash symbolicates a
/// handled error's stack) and fulfills the ticket, which queues it like `track` would have at the moment of
/// the reservation. `flush()` and `shutdown()` first wait for every ticket reserved before them, so an event
/// reserved before a flush is part of it; nothing reserved is lost while the client runs.
extension Cohorly {
    /// A ticket for one event, or nil when the user opted out (nothing may be queued). Cheap: one lock.
    package func reserveLiveEvent() -> LiveEventTicket? {
        let time = Int64(Date().timeIntervalSince1970 * 1000)
        let stamp = state.withLock { state in
            state.optedOut ? nil : (distinctId: state.distinctId, superProperties: state.superProperties)
        }
        guard let stamp else { return nil }
        return LiveEventTicket(
            client: self, id: liveEvents.reserve(), time: time, distinctId: stamp.distinctId,
            superProperties: stamp.superProperties)
    }
}

/// One reserved event (see ``Cohorly/reserveLiveEvent()``). Fulfil or cancel it exactly once; a ticket that
/// is dropped unsettled cancels itself, so a flush never waits on it forever.
package final class LiveEventTicket: Sendable {
    /// When the event was reserved (unix milliseconds): the event's `time`.
    package let time: Int64
    private let client: Cohorly
    private let id: Int
    private let distinctId: String
    private let superProperties: Properties
    private let settled = Mutex(false)

    init(client: Cohorly, id: Int, time: Int64, distinctId: String, superProperties: Properties) {
        self.client = client
        self.id = id
        self.time = time
        self.distinctId = distinctId
        self.superProperties = superProperties
    }

    deinit { cancel() }

    /// Queues `record` as `track` would have queued an event at the reservation: its properties win over the
    /// super properties of that moment, which win over the automatic ones; `distinct_id` is the reservation's
    /// unless the record sets it. Dropped when the user opted out since.
    package func fulfill(_ record: QueuedException) {
        guard settle() else { return }
        let pending = ReservedException(record: record, superProperties: superProperties, distinctId: distinctId)
        client.state.enqueue { state in state.optedOut ? nil : .exception(pending) }
        client.liveEvents.settle(id)  // after the enqueue: a flush waiting on this ticket comes after it
    }

    /// Gives the reservation up (nothing is queued).
    package func cancel() {
        guard settle() else { return }
        client.liveEvents.settle(id)
    }

    private func settle() -> Bool {
        settled.withLock { done in
            defer { done = true }
            return !done
        }
    }
}

/// The open tickets of a client and who waits for them.
final class LiveEventReservations: @unchecked Sendable {
    private let lock = ConditionLock()
    private var next = 0
    private var open = Set<Int>()
    private var waiters: [(before: Int, resume: @Sendable () -> Void)] = []

    func reserve() -> Int {
        lock.withLock {
            defer { next += 1 }
            open.insert(next)
            return next
        }
    }

    func settle(_ id: Int) {
        let ready: [@Sendable () -> Void] = lock.withLock {
            open.remove(id)
            lock.broadcast()
            let oldest = open.min() ?? next
            let ready = waiters.filter { $0.before <= oldest }.map(\.resume)
            waiters.removeAll { $0.before <= oldest }
            return ready
        }
        for resume in ready { resume() }
    }

    /// Calls `body` (at once, or on the thread that settles the last of them) once every ticket reserved
    /// before this call is settled.
    func whenSettled(_ body: @escaping @Sendable () -> Void) {
        let now: Bool = lock.withLock {
            guard let oldest = open.min(), oldest < next else { return true }
            waiters.append((before: next, resume: body))
            return false
        }
        if now { body() }
    }

    /// Waits until every ticket reserved before this call is settled, at most `timeout` seconds.
    /// Returns false on timeout.
    @discardableResult
    func waitSettled(timeout: Double) -> Bool {
        let deadline = Monotonic.now() + timeout
        return lock.withLock {
            let before = next
            while let oldest = open.min(), oldest < before {
                if Monotonic.now() >= deadline { return false }
                lock.wait(until: deadline)
            }
            return true
        }
    }

    /// Waits, without blocking a thread, until every ticket reserved before this call is settled.
    func settled() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            whenSettled { continuation.resume() }
        }
    }
}
