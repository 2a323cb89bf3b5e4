import Foundation
import Synchronization

extension Cohorly {
    /// Sends what another launch left queued in `storageDirectory`, for a detached sender process (the path that
    /// lets a crash loop at startup still report). Tries until the queue is empty or `timeout` seconds pass,
    /// waiting out the retry contract's backoff between attempts. Safe while the app itself runs: only one client
    /// sends a queue at a time (see `queue.lock`). A server that refuses the token twice in a row (HTTP 401) ends
    /// it at once, for this launch: a wrong token does not heal while a sender waits, and the records stay
    /// queued for the app's next launch. It never creates `storageDirectory`: when the directory does not exist
    /// (the app's data was deleted, perhaps while this waited for its turn) or disappears while it sends, it ends
    /// without sending.
    /// - Returns: true when everything queued was delivered (or dropped as the contract says), or when there is no
    ///   queue.
    public static func sendQueued(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double = 60, options: CohorlyOptions = .default
    ) async -> Bool {
        await sendQueued(
            storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options,
            prepare: { _ in })
    }

    /// ``sendQueued(storageDirectory:apiHost:token:timeout:options:)``, calling `prepare` with the queue's client
    /// (its destination restored) before sending: the detached crash sender queues there the reports it took
    /// over, encoded for the queue's destination.
    package static func sendQueued(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions,
        prepare: (Cohorly) -> Void
    ) async -> Bool {
        await sendQueued(
            storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options,
            clock: ContinuousClock(), prepare: prepare)
    }

    /// ``sendQueued(storageDirectory:apiHost:token:timeout:options:prepare:)`` timed by `clock`: the deadline and the
    /// backoff sleeps are measured on it (monotonic in the client, so a wall-clock change neither ends nor extends
    /// the sending; a test's clock lets the waits pass at once).
    static func sendQueued(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions,
        clock: some Clock<Duration>, prepare: (Cohorly) -> Void
    ) async -> Bool {
        guard
            let sending = QueuedSending(
                storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options)
        else { return true }
        defer { sending.client.shutdown() }
        let deadline = clock.now.advanced(by: .seconds(clampingSeconds: timeout))
        prepare(sending.client)
        while true {
            if await sending.client.flush() { return true }
            guard let wait = sending.nextWait(remaining: clock.now.duration(to: deadline)) else { return false }
            try? await clock.sleep(for: wait)
            if let stopped = sending.stoppedAfterWaiting() { return stopped }
        }
    }

    /// ``sendQueued(storageDirectory:apiHost:token:timeout:options:prepare:)`` without Swift concurrency, on the
    /// calling thread: the detached crash sender runs it from a C constructor before `main`, where a task may never
    /// run (the runtime of a `--static-swift-stdlib` or `-static-executable` build is not started yet). Every wait
    /// ends by the deadline (an exchange in flight may run past it by its own timeout).
    package static func sendQueuedBlocking(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions,
        prepare: (Cohorly) -> Void
    ) -> Bool {
        guard
            let sending = QueuedSending(
                storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options)
        else { return true }
        defer { sending.client.shutdown() }
        let deadline = Monotonic.now() + max(0, timeout)
        prepare(sending.client)
        while true {
            if sending.client.flush(waitingAtMost: deadline - Monotonic.now()) { return true }
            let remaining = Duration.seconds(clampingSeconds: deadline - Monotonic.now())
            guard let wait = sending.nextWait(remaining: remaining) else { return false }
            let nanoseconds = wait.components.seconds * 1_000_000_000 + wait.components.attoseconds / 1_000_000_000
            var pause = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
            var left = timespec()
            while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
            if let stopped = sending.stoppedAfterWaiting() { return stopped }
        }
    }
}

/// One sending of a queue another launch left (``Cohorly/sendQueued(storageDirectory:apiHost:token:timeout:options:prepare:)``
/// and its blocking twin): the queue's client, and what decides whether to try again after a failed flush.
private final class QueuedSending {
    let client: Cohorly
    private let storageDirectory: URL
    private let retry: RetryPolicy
    private let refusals = RefusalCount()
    private var failures = 0

    /// The client of the queue in `storageDirectory`, its destination restored; nil when there is no queue (the
    /// directory does not exist, or was removed between the check and the open): nothing to send. No exchange
    /// lasts longer than `timeout` seconds (the whole sending's).
    init?(storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions) {
        var options = options
        options.storageDirectory = storageDirectory
        options.retry.requestTimeout = min(options.retry.requestTimeout, max(1, timeout))
        options.retry.connectTimeout = min(options.retry.connectTimeout, max(1, timeout))
        let refusals = self.refusals
        let observer = options.attemptObserver
        options.attemptObserver = { attempt in
            observer?(attempt)
            refusals.count.withLock { $0 = attempt.status == 401 ? $0 + 1 : 0 }
        }
        options.flushInterval = .infinity
        options.flushAt = .max
        options.loadFeatureFlags = false
        options.createsStorageDirectory = false
        guard Cohorly.directoryExists(storageDirectory) else { return nil }
        // The queue remembers its destination (PostHog or the Cohorly API); `apiHost` and `token` are its host
        // and key either way.
        let client = Cohorly(apiHost: apiHost, token: token, options: options) { store in
            DestinationRegistry.restore(store.meta(MetaKey.destination), host: apiHost, token: token)
        }
        guard client.queueIsPersisted else {
            client.shutdown()
            return nil
        }
        self.client = client
        self.storageDirectory = storageDirectory
        self.retry = options.retry
    }

    /// After a failed flush: how long to wait before the next one (the retry contract's backoff, cut to what is
    /// left of `remaining`), or nil to give up (no time left, or the token refused twice in a row).
    func nextWait(remaining: Duration) -> Duration? {
        if refusals.count.withLock({ $0 }) >= 2 {
            client.state.log(
                "the server refused the project token twice (HTTP 401): the sender gives up for this launch; "
                    + "\(client.queuedCount) record(s) stay queued")
            return nil
        }
        failures += 1
        let wait = min(Duration.seconds(clampingSeconds: retry.delay(afterFailures: failures)), remaining)
        return wait > .zero ? wait : nil
    }

    /// After a wait: true (done) when the queue's directory was removed meanwhile, else nil (go on).
    func stoppedAfterWaiting() -> Bool? {
        guard !Cohorly.directoryExists(storageDirectory) else { return nil }
        client.state.log("the queue's directory was removed: the sender stops")
        return true
    }
}

extension Cohorly {
    static func directoryExists(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}

/// Consecutive HTTP 401 answers seen by a `sendQueued` client.
private final class RefusalCount: Sendable {
    let count = Mutex(0)
}

extension Duration {
    /// `seconds` as a duration; negative or NaN counts as zero, and more than 100 years (infinity too) as 100 years,
    /// so no option value can trap.
    package static func seconds(clampingSeconds seconds: Double) -> Duration {
        .seconds(seconds > 0 ? min(seconds, 100 * 365 * 86_400) : 0)
    }

    /// The duration in seconds.
    package var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
