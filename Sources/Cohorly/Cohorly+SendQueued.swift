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
        var options = options
        options.storageDirectory = storageDirectory
        let refusals = RefusalCount()
        let observer = options.attemptObserver
        options.attemptObserver = { attempt in
            observer?(attempt)
            refusals.count.withLock { $0 = attempt.status == 401 ? $0 + 1 : 0 }
        }
        options.flushInterval = .infinity
        options.flushAt = .max
        options.loadFeatureFlags = false
        options.createsStorageDirectory = false
        guard Self.directoryExists(storageDirectory) else { return true }
        // The queue remembers its destination (PostHog or the Cohorly API); `apiHost` and `token` are its host
        // and key either way.
        let client = Cohorly(apiHost: apiHost, token: token, options: options) { store in
            DestinationRegistry.restore(store.meta(MetaKey.destination), host: apiHost, token: token)
        }
        defer { client.shutdown() }
        // Removed between the check and the open: the client opened no queue (and made no directory).
        guard client.queueIsPersisted else { return true }
        let deadline = clock.now.advanced(by: .seconds(clampingSeconds: timeout))
        prepare(client)
        var failures = 0
        while true {
            if await client.flush() { return true }
            if refusals.count.withLock({ $0 }) >= 2 {
                client.state.log(
                    "the server refused the project token twice (HTTP 401): the sender gives up for this launch; "
                        + "\(client.queuedCount) record(s) stay queued")
                return false
            }
            failures += 1
            let backoff = Duration.seconds(clampingSeconds: options.retry.delay(afterFailures: failures))
            let wait = min(backoff, clock.now.duration(to: deadline))
            guard wait > .zero else { return false }
            try? await clock.sleep(for: wait)
            guard Self.directoryExists(storageDirectory) else {
                client.state.log("the queue's directory was removed: the sender stops")
                return true
            }
        }
    }
}

extension Cohorly {
    fileprivate static func directoryExists(_ url: URL) -> Bool {
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
