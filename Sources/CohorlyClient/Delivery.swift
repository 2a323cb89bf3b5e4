import CohorlyLaunch
import Foundation

/// The sender: one background thread that drains the persisted queue under the retry contract.
///
/// It wakes when the queue reaches `flushAt`, when the flush interval ends, or when `flush()` asks. Timer and
/// size flushes wait out the backoff window; an explicit flush tries at once. A record leaves the queue only on
/// a terminal answer (2xx, or a drop the contract calls for), so a kill at any moment loses nothing.
final class Delivery: @unchecked Sendable {
    private struct FlushRequest {
        let throughId: Int64
        let completion: FlushCompletion
    }

    private let store: any QueueStore
    let transport: any Transport
    let options: CohorlyOptions
    private let destination: any Destination
    private let logLine: @Sendable (String) -> Void
    /// `queue.lock` (``LaunchLock/queue``), held while this client drains the queue: only one client, in any
    /// process, sends a given queue at a time, so a relaunched app and a detached sender (or two clients on one
    /// directory) never send one record twice. Nil for a queue in memory. Used only by the delivery thread.
    private let queueLock: LockFile?
    private let signal = ConditionLock()
    private let finished = DispatchSemaphore(value: 0)
    /// The process whose thread sends (a forked child has none).
    private let process = getpid()
    // Guarded by `signal`.
    private var flushRequests: [FlushRequest] = []
    private var stopping = false
    private var paused = false
    /// Set by `cancelRetries()` (a reset): the batch in flight stops retrying.
    private var cancelled = false
    private var backoffUntil = 0.0
    /// The configuration problems reported this launch (``warnOnce(_:_:)``).
    private var warned: Set<String> = []
    private var nextTimerFlush: Double
    // Only touched by the sender thread.
    private var failures = 0
    private var batchSize: Int

    init(
        store: any QueueStore, transport: any Transport, options: CohorlyOptions, destination: any Destination,
        queueLock: LockFile?, log: @escaping @Sendable (String) -> Void
    ) {
        self.queueLock = queueLock
        self.store = store
        self.transport = transport
        self.options = options
        self.destination = destination
        self.logLine = log
        self.batchSize = max(1, min(options.maxBatchSize, 500))
        self.nextTimerFlush = Monotonic.now() + options.flushInterval
    }

    func start() {
        let thread = Thread { [self] in
            ThreadName.setCurrent("cohorly-deliver")
            run()
        }
        thread.name = "cohorly-deliver"
        thread.start()
    }

    /// Wakes the sender (new records were queued).
    func notifyQueued() {
        signal.withLock { signal.broadcast() }
    }

    /// While paused (opted out) nothing is sent; flushes answer at once.
    func setPaused(_ value: Bool) {
        signal.withLock {
            paused = value
            signal.broadcast()
        }
    }

    /// Calls `completion` once no record with id ≤ `throughId` is queued (true) or an attempt failed (false).
    func requestFlush(throughId: Int64, completion: @escaping FlushCompletion) {
        signal.withLock {
            if stopping {
                completion(false)
                return
            }
            flushRequests.append(FlushRequest(throughId: throughId, completion: completion))
            signal.broadcast()
        }
    }

    /// Stops the retries of the batch in flight (its unfinished records stay queued): `reset()` cleared them.
    func cancelRetries() {
        signal.withLock {
            cancelled = true
            signal.broadcast()
        }
    }

    /// Stops the thread after its current exchange and waits for it.
    func stop() {
        beginStopping()
        finished.wait()
        finished.signal()  // stopped for good: a later stop returns at once
    }

    /// Stops the thread after its current exchange and waits at most `seconds` for it (the process is exiting):
    /// true when it stopped. No new exchange starts meanwhile, so a record is not sent while nothing is left to
    /// take its answer and remove it — which would send it again from the next launch.
    @discardableResult
    func stop(waitingAtMost seconds: Double) -> Bool {
        // A forked child exiting has no sender thread to wait for.
        guard getpid() == process else { return false }
        beginStopping()
        guard finished.wait(timeout: .now() + max(0, seconds)) == .success else { return false }
        finished.signal()
        return true
    }

    /// True once `stop` was called (the tests wait for it).
    var isStopping: Bool { signal.withLock { stopping } }

    private func beginStopping() {
        signal.withLock {
            stopping = true
            signal.broadcast()
        }
    }

    private func run() {
        while waitForWork() {
            drain()
            signal.withLock { nextTimerFlush = Monotonic.now() + options.flushInterval }
        }
        let pending = signal.withLock {
            let requests = flushRequests
            flushRequests.removeAll()
            return requests
        }
        for request in pending { request.completion(false) }
        finished.signal()
    }

    /// Blocks until there is something to send; false when stopping.
    private func waitForWork() -> Bool {
        signal.lock()
        defer { signal.unlock() }
        while !stopping {
            let now = Monotonic.now()
            if paused {
                completeFlushes(all: true)
                signal.wait(until: nil)
                continue
            }
            if !flushRequests.isEmpty { return true }
            let count = store.count
            if count == 0 {
                // The interval starts with the first record queued after the queue was empty.
                nextTimerFlush = .infinity
                signal.wait(until: nil)
                continue
            }
            if nextTimerFlush == .infinity { nextTimerFlush = now + options.flushInterval }
            let due = Self.automaticFlushDue(
                now: now, count: count, flushAt: options.flushAt, timer: nextTimerFlush, backoffUntil: backoffUntil)
            if now >= due { return true }
            signal.wait(until: due)
        }
        return false
    }

    /// When an automatic (size or timer) flush may start: at once when `count` reached `flushAt`, else when the
    /// timer fires; never inside the backoff window. Explicit flushes do not ask.
    static func automaticFlushDue(now: Double, count: Int, flushAt: Int, timer: Double, backoffUntil: Double) -> Double
    {
        max(count >= flushAt ? now : timer, backoffUntil)
    }

    /// Resolves flush requests whose records are all gone (all = true: every request, as success).
    private func completeFlushes(all: Bool = false, failed: Bool = false) {
        guard !flushRequests.isEmpty else { return }
        let oldest = all || failed ? nil : ((try? store.oldestId()) ?? nil)
        flushRequests.removeAll { request in
            if failed {
                request.completion(false)
                return true
            }
            guard all || oldest.map({ request.throughId < $0 }) ?? true else { return false }
            request.completion(true)
            return true
        }
    }

    private func drain() {
        // A lock file that cannot be opened does not block sending.
        guard queueLock.map({ !$0.open() || $0.tryLock() }) ?? true else {
            let delay = options.retry.baseDelay
            log("another client is sending this queue; trying again in \(LogDuration.text(delay))")
            signal.withLock {
                backoffUntil = Monotonic.now() + delay
                completeFlushes(failed: true)
            }
            return
        }
        defer { queueLock?.unlock() }
        while true {
            if signal.withLock({ stopping || paused }) { return }
            let read: QueueBatch?
            do {
                read = try store.nextBatch(
                    maxCount: batchSize, maxBytes: options.maxRequestBytes,
                    optionProperties: destination.legacyOptionProperties)
            } catch {
                log("cannot read the queue: \(error)")
                signal.withLock { completeFlushes(failed: true) }
                return
            }
            let dropped = store.takeDroppedUnreadable()
            if dropped > 0 {
                warnOnce(
                    "unreadable rows",
                    "dropped \(dropped) queued record(s) this version cannot send (written by another version of the"
                        + " SDK sharing the queue); they no longer hold up the others")
            }
            guard let read else {
                signal.withLock { completeFlushes(all: true) }
                return
            }
            let batch = read.prefix(destination.requestLength(of: read))
            signal.withLock { cancelled = false }
            switch destination.deliver(batch, context: self) {
            case .finished(let delivered):
                if delivered { signal.withLock { backoffUntil = 0 } }
                guard remove(batch.ids) else { return }
            case .halve(let size, let removable):
                if !removable.isEmpty { guard remove(removable) else { return } }
                batchSize = size
                log("payload too large (413), batch size now \(batchSize)")
            case .keep(let removable, let delay, let reason):
                log("\(reason); \(batch.count - removable.count) record(s) kept, retry in \(LogDuration.text(delay))")
                if !removable.isEmpty { _ = remove(removable) }
                signal.withLock {
                    backoffUntil = Monotonic.now() + delay
                    completeFlushes(failed: true)
                }
                return
            case .cancelled(let removable):
                if !removable.isEmpty { _ = remove(removable) }
                log("retries stopped; \(batch.count - removable.count) record(s) kept")
                return
            }
        }
    }

    /// Removes finished records; on a storage error backs off (the records are sent again later, and the server
    /// dedupes them) instead of spinning on them.
    private func remove(_ ids: [Int64]) -> Bool {
        do {
            try store.remove(ids)
            signal.withLock { completeFlushes() }
            return true
        } catch {
            log("cannot remove sent records: \(error)")
            signal.withLock {
                backoffUntil = Monotonic.now() + options.retry.baseDelay
                completeFlushes(failed: true)
            }
            return false
        }
    }
}

extension Delivery: DeliveryContext {
    func wait(_ seconds: Double) -> Bool {
        let deadline = Monotonic.now() + max(0, seconds)
        return signal.withLock {
            while !stopping && !paused && !cancelled && Monotonic.now() < deadline { signal.wait(until: deadline) }
            return !(stopping || paused || cancelled)
        }
    }

    func log(_ message: String) { logLine(message) }

    func warnOnce(_ key: String, _ message: String) {
        guard signal.withLock({ warned.insert(key).inserted }) else { return log(message) }
        ConfigurationWarnings.write(message, options)
    }
}
