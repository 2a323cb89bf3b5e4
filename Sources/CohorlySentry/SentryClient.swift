import CohorlyClient
import CohorlyLaunch
import Foundation

extension Cohorly {
    /// Configures a client that sends to Sentry (envelopes to the DSN's project), makes it `Cohorly.shared` and
    /// returns it. The queue, opt-out, flush and crash delivery work as with the Cohorly API; crashes, handled
    /// errors, hangs and abnormal exits become Sentry events, each launch a release-health session (see
    /// `SentryConfiguration` and docs/sentry.md).
    /// - Parameters:
    ///   - sentry: the DSN and the event options.
    ///   - storageDirectory, flushInterval, flushAt, maxQueueSize, debug, options: as in
    ///     `initialize(apiHost:token:…)`; each left nil keeps the value in `options`.
    @discardableResult
    public static func initialize(
        sentry: SentryConfiguration, storageDirectory: URL? = nil, flushInterval: Double? = nil, flushAt: Int? = nil,
        maxQueueSize: Int? = nil, debug: Bool? = nil, options: CohorlyOptions = .default
    ) -> Cohorly {
        let options = merged(
            options, storageDirectory: storageDirectory, flushInterval: flushInterval, flushAt: flushAt,
            maxQueueSize: maxQueueSize, debug: debug)
        let client = makeShared(Cohorly(sentry: sentry, options: options))
        _ = endSessionAtExit
        return client
    }

    /// A client that sends to Sentry and is not registered as `shared`. Its launch's session starts now (committed
    /// to the queue before this returns, one SQLite transaction); it ends
    /// as `exited` when ``endSentrySession()`` is called (the shared client: at a normal exit).
    public convenience init(sentry: SentryConfiguration, options: CohorlyOptions = .default) {
        let destination = SentryDestination(configuration: sentry)
        self.init(apiHost: sentry.baseURL, token: sentry.publicKey, options: options, destination: destination)
        guard sentry.sessions, !isOptedOut else { return }
        let session = SentrySession(
            did: currentDistinctId, release: sentry.sessionRelease, environment: sentry.environment,
            startedMs: Int64(Date().timeIntervalSince1970 * 1000))
        // Held before the session is committed, so a launch starting meanwhile sees it running.
        let directory = queueIsPersisted ? options.storageDirectory ?? Self.defaultStorageDirectory() : nil
        if let directory { destination.sessions.launchLock = SessionLock(directory: directory, sid: session.sid) }
        var taken: [String] = []
        var open: Set<String> = [session.sid]
        let committed = commitLaunchStart { settings in
            open.formUnion(
                settings.values(prefix: SentrySession.openPrefix).compactMap { SentrySession(json: $0.value)?.sid })
            let start = destination.sessions.start(
                session, settings: settings,
                running: { sid in
                    directory.map { SessionLock.isHeld(directory: $0, sid: sid) } ?? false
                }, atMs: session.startedMs)
            taken = start.taken
            return start.operations
        }
        // On disk before the app goes on: a launch that crashes or is killed at once still has its session.
        guard committed, let directory else { return }
        for sid in taken { SessionLock.remove(directory: directory, sid: sid) }
        SessionLock.removeStray(directory: directory, keeping: open)
    }

    /// Ends this launch's Sentry session as `exited` (a normal exit; the shared client does it at exit) and
    /// commits the update, waiting at most 2 s (and as long for the handled errors queued before, which count in it). Nothing for other destinations, or when it already ended.
    public func endSentrySession() {
        endLaunch()
    }

    /// At a normal exit, ends the shared client's Sentry session (registered after `commitAtExit`, so it runs
    /// first).
    private static let endSessionAtExit: Void = {
        atexit { Cohorly.shared?.endSentrySession() }
    }()
}
