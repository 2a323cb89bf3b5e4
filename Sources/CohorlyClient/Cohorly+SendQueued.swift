import Foundation
import Synchronization

/// The destination a queue's persisted description (its ``Destination/persistedDescription``) stands for, for the
/// host and key the sender was given: the registry the client is handed, since it names no destination itself.
package typealias DestinationRestorer = (_ persisted: String?, _ host: URL, _ token: String?) -> any Destination

extension Cohorly {
    /// Sends what another launch left queued in `storageDirectory` (the facade's `Cohorly.sendQueued` says how),
    /// its destination restored by `destinations`, calling `prepare` with the queue's client before sending. Timed
    /// by `clock`: the deadline and the backoff sleeps are measured on it (monotonic in the client, so a wall-clock
    /// change neither ends nor extends the sending; a test's clock lets the waits pass at once).
    package static func sendQueued(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions,
        destinations: DestinationRestorer, clock: some Clock<Duration>, prepare: (Cohorly) -> Void
    ) async -> Bool {
        guard
            let sending = QueuedSending(
                storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options,
                destinations: destinations)
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

    /// ``sendQueued(storageDirectory:apiHost:token:timeout:options:destinations:clock:prepare:)`` without Swift
    /// concurrency, on the calling thread: the detached crash sender runs it from a C constructor before `main`,
    /// where a task may never run (the runtime of a `--static-swift-stdlib` or `-static-executable` build is not
    /// started yet). Every wait ends by the deadline (an exchange in flight may run past it by its own timeout).
    package static func sendQueuedBlocking(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions,
        destinations: DestinationRestorer, prepare: (Cohorly) -> Void
    ) -> Bool {
        guard
            let sending = QueuedSending(
                storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options,
                destinations: destinations)
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

/// One sending of a queue another launch left
/// (``Cohorly/sendQueued(storageDirectory:apiHost:token:timeout:options:destinations:clock:prepare:)`` and its
/// blocking twin): the queue's client, and what decides whether to try again after a failed flush.
private final class QueuedSending {
    let client: Cohorly
    private let storageDirectory: URL
    private let retry: RetryPolicy
    private let refusals = RefusalCount()
    private var failures = 0

    /// The client of the queue in `storageDirectory`, its destination restored; nil when there is no queue (the
    /// directory does not exist, or was removed between the check and the open): nothing to send. No exchange
    /// lasts longer than `timeout` seconds (the whole sending's).
    init?(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions,
        destinations: DestinationRestorer
    ) {
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
        // The queue remembers its destination; `apiHost` and `token` are its host and key whichever it is.
        let client = Cohorly(apiHost: apiHost, token: token, options: options) { store in
            destinations(store.meta(MetaKey.destination), apiHost, token)
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
