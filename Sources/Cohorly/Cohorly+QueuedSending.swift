import Foundation

extension Cohorly {
    /// Sends what another launch left queued in `storageDirectory`, for a detached sender process (the path that
    /// lets a crash loop at startup still report). Tries until the queue is empty or `timeout` seconds pass,
    /// waiting out the retry contract's backoff between attempts. Safe while the app itself runs: only one client
    /// sends a queue at a time (see `queue.lock`). A server that refuses the token twice in a row (HTTP 401) ends
    /// it at once, for this launch: a wrong token does not heal while a sender waits, and the records stay
    /// queued for the app's next launch. It never creates `storageDirectory`: when the directory does not exist
    /// (the app's data was deleted, perhaps while this waited for its turn) or disappears while it sends, it ends
    /// without sending. The queue's destination is the one it was written for (``DestinationRegistry``).
    /// - Returns: true when everything queued was delivered (or dropped as the contract says), or when there is no
    ///   queue.
    public static func sendQueued(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double = 60, options: CohorlyOptions = .default
    ) async -> Bool {
        await sendQueued(
            storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options,
            clock: ContinuousClock(), prepare: { _ in })
    }

    /// ``sendQueued(storageDirectory:apiHost:token:timeout:options:)``, calling `prepare` with the queue's client
    /// (its destination restored) before sending: the detached crash sender queues there the reports it took
    /// over, encoded for the queue's destination. Timed by `clock` (a test's clock lets the waits pass at once).
    package static func sendQueued(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions,
        clock: some Clock<Duration> = ContinuousClock(), prepare: (Cohorly) -> Void
    ) async -> Bool {
        await sendQueued(
            storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options,
            destinations: DestinationRegistry.restore, clock: clock, prepare: prepare)
    }

    /// ``sendQueued(storageDirectory:apiHost:token:timeout:options:clock:prepare:)`` without Swift concurrency, on
    /// the calling thread: the detached crash sender runs it from a C constructor before `main`.
    package static func sendQueuedBlocking(
        storageDirectory: URL, apiHost: URL, token: String?, timeout: Double, options: CohorlyOptions,
        prepare: (Cohorly) -> Void
    ) -> Bool {
        sendQueuedBlocking(
            storageDirectory: storageDirectory, apiHost: apiHost, token: token, timeout: timeout, options: options,
            destinations: DestinationRegistry.restore, prepare: prepare)
    }
}
