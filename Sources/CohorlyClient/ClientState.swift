import Foundation

/// Keys of the persisted settings.
enum MetaKey {
    static let anonymousId = "anonymous_id"
    static let distinctId = "distinct_id"
    static let identified = "identified"
    static let superProperties = "super_properties"
    static let optedOut = "opted_out"
    /// The destination the queue's records were written for (absent: the Cohorly API).
    static let destination = "destination"
}

/// An event as `track` captured it; the persister turns it into JSON (with its `$insert_id`).
struct PendingEvent: Sendable {
    var name: String
    var properties: Properties
    var superProperties: Properties
    var distinctId: String
    var time: Int64
}

/// An exception that fulfils a live-event reservation (``LiveEventTicket``): made off the caller's thread (a
/// handled error, a hang), it carries the distinct id and super properties of the reservation, so the persister
/// stamps it like `track` would have stamped an event at that moment.
struct ReservedException: Sendable {
    var record: QueuedException
    var superProperties: Properties
    var distinctId: String
}

/// One step for the persister, kept in call order.
enum PendingOperation: Sendable {
    case event(PendingEvent)
    case exception(ReservedException)
    case profile(ProfileOperation)
    case store(QueueOperation)
}

/// Identity, super properties and opt-out: the client's mutable state.
struct ClientState: Sendable {
    var anonymousId: String
    var distinctId: String
    var identified: Bool
    var superProperties: Properties
    var optedOut: Bool
    var droppedCount = 0
    /// True when no identity was stored yet (this launch created it and must persist it).
    var isNew = false

    /// The persisted state, or a fresh anonymous identity.
    static func load(from store: any QueueStore) -> ClientState {
        let stored = store.meta(MetaKey.anonymousId)
        let anonymousId = stored ?? UUIDv4.make()
        let superProperties =
            store.meta(MetaKey.superProperties).flatMap { CohorlyValue(json: $0)?.objectValue } ?? [:]
        return ClientState(
            anonymousId: anonymousId, distinctId: store.meta(MetaKey.distinctId) ?? anonymousId,
            identified: store.meta(MetaKey.identified) == "1", superProperties: superProperties,
            optedOut: store.meta(MetaKey.optedOut) == "1", isNew: stored == nil)
    }

    func identityMeta() -> [PendingOperation] {
        [
            .store(.setMeta(MetaKey.anonymousId, anonymousId)),
            .store(.setMeta(MetaKey.distinctId, distinctId)),
            .store(.setMeta(MetaKey.identified, identified ? "1" : "0")),
        ]
    }

    func superPropertiesMeta() -> PendingOperation {
        .store(.setMeta(MetaKey.superProperties, CohorlyValue.object(superProperties).jsonString))
    }
}

/// Something waiting on the persister: a flush (then handed to delivery) or a durability barrier.
enum PersistWaiter {
    case flush(FlushCompletion)
    case persisted(DispatchSemaphore)
}

/// The state plus the persister's inbox, under one lock. Callers only append to memory here.
final class ClientStateBox: @unchecked Sendable {
    private let lock = ConditionLock()
    private var state: ClientState
    private var pending: [PendingOperation] = []
    private var waiters: [PersistWaiter] = []
    private var stopped = false
    private var pendingRecords = 0
    private var identityObservers: [@Sendable (_ distinctId: String, _ optedOut: Bool) -> Void] = []
    private var superPropertiesObservers: [@Sendable (Properties) -> Void] = []
    private let maxPendingRecords: Int
    let log: @Sendable (String) -> Void

    /// `maxQueueSize` also bounds records waiting in memory: beyond it the oldest would be dropped on commit
    /// anyway, so they are dropped (and counted) before, which keeps memory bounded when callers outpace the disk.
    init(_ state: ClientState, maxQueueSize: Int, log: @escaping @Sendable (String) -> Void) {
        self.state = state
        self.log = log
        self.maxPendingRecords = max(1, maxQueueSize)
        // Only a new identity is written: rewriting a loaded one could undo a change another process (a
        // detached sender sharing the directory, say) made meanwhile.
        pending = state.isNew ? state.identityMeta() : []
    }

    func withLock<T>(_ body: (inout ClientState) -> T) -> T {
        lock.withLock { body(&state) }
    }

    /// Appends the operation `make` builds from the current state (nil: nothing to queue).
    func enqueue(_ make: (ClientState) -> PendingOperation?) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, let operation = make(state) else { return }
        pending.append(operation)
        if pending.count == 1 { lock.broadcast() }
        pendingRecords += 1
        if pendingRecords > 2 * maxPendingRecords { dropOldestPending() }
    }

    /// Keeps the newest `maxPendingRecords` records (settings changes always stay). Lock held.
    private func dropOldestPending() {
        var excess = pendingRecords - maxPendingRecords
        let dropped = excess
        pending.removeAll { operation in
            guard excess > 0 else { return false }
            switch operation {
            case .event, .exception, .profile:
                excess -= 1
                return true
            case .store:
                return false
            }
        }
        pendingRecords = maxPendingRecords
        state.droppedCount += dropped
    }

    /// Changes the state and queues the operations that persist the change. Identity observers hear about a
    /// new distinct id or opt-out state in the order the changes were made.
    func mutate(_ body: (inout ClientState) -> [PendingOperation]) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        let before = (state.distinctId, state.optedOut)
        let superBefore = state.superProperties
        pending.append(contentsOf: body(&state))
        lock.broadcast()
        if before != (state.distinctId, state.optedOut) {
            for observer in identityObservers { observer(state.distinctId, state.optedOut) }
        }
        if superBefore != state.superProperties {
            for observer in superPropertiesObservers { observer(state.superProperties) }
        }
    }

    /// Adds a super-properties observer and calls it once with the current ones (under the lock, so no change
    /// is missed between the two). Observers must not call back into the client.
    func addSuperPropertiesObserver(_ observer: @escaping @Sendable (Properties) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        superPropertiesObservers.append(observer)
        observer(state.superProperties)
    }

    /// Adds an identity observer and calls it once with the current state (under the lock, so no change is
    /// missed between the two). Observers must not call back into the client.
    func addIdentityObserver(_ observer: @escaping @Sendable (_ distinctId: String, _ optedOut: Bool) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        identityObservers.append(observer)
        observer(state.distinctId, state.optedOut)
    }

    func requestFlush(_ completion: @escaping FlushCompletion) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return completion(false) }
        waiters.append(.flush(completion))
        lock.broadcast()
    }

    /// Blocks until everything queued before the call is committed (returns at once after `stop`).
    /// Returns false when `timeout` (seconds) passed first.
    @discardableResult
    func waitUntilPersisted(timeout: Double? = nil) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        lock.lock()
        guard !stopped else {
            lock.unlock()
            return true
        }
        waiters.append(.persisted(semaphore))
        lock.broadcast()
        lock.unlock()
        guard let timeout else {
            semaphore.wait()
            return true
        }
        return semaphore.wait(timeout: .now() + timeout) == .success
    }

    func addDropped(_ count: Int) -> Int {
        lock.withLock {
            state.droppedCount += count
            return state.droppedCount
        }
    }

    /// Marks the client stopped; false when it already was.
    func stop() -> Bool {
        lock.withLock {
            guard !stopped else { return false }
            stopped = true
            lock.broadcast()
            return true
        }
    }

    /// The persister's wait: everything pending and every waiter, or `stopping` once stopped and drained.
    func take() -> (operations: [PendingOperation], waiters: [PersistWaiter], stopping: Bool) {
        lock.lock()
        defer { lock.unlock() }
        while pending.isEmpty && waiters.isEmpty && !stopped { lock.wait(until: nil) }
        let result = (pending, waiters, stopped)
        pending = []
        pendingRecords = 0
        waiters.removeAll()
        return result
    }

    /// Holds `Cohorly.shared`.
    final class SharedSlot: @unchecked Sendable {
        private let lock = NSLock()
        private var client: Cohorly?
        var value: Cohorly? {
            get { lock.withLock { client } }
            set { lock.withLock { client = newValue } }
        }
    }
}
