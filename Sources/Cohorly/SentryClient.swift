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
        self.init(apiHost: sentry.baseURL, token: sentry.publicKey, options: options) { _ in destination }
        guard sentry.sessions, !isOptedOut else { return }
        let session = SentrySession(
            did: currentDistinctId, release: sentry.sessionRelease, environment: sentry.environment,
            startedMs: Int64(Date().timeIntervalSince1970 * 1000))
        // Held before the session is committed, so a launch starting meanwhile sees it running.
        let directory = queueIsPersisted ? options.storageDirectory ?? Self.defaultStorageDirectory() : nil
        if let directory { destination.sessions.launchLock = SessionLock(directory: directory, sid: session.sid) }
        state.waitUntilPersisted(timeout: 2)
        var taken: [String] = []
        var open: Set<String> = [session.sid]
        let committed = try? store.apply(limit: options.maxQueueSize) { settings in
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
        guard committed != nil else { return }
        if let directory {
            for sid in taken { SessionLock.remove(directory: directory, sid: sid) }
            SessionLock.removeStray(directory: directory, keeping: open)
        }
        delivery.notifyQueued()
    }

    /// Ends this launch's Sentry session as `exited` (a normal exit; the shared client does it at exit) and
    /// commits the update, waiting at most 2 s (and as long for the handled errors queued before, which count in it). Nothing for other destinations, or when it already ended.
    public func endSentrySession() {
        guard destination.followsLaunches else { return }
        // The handled errors queued before count in it.
        liveEvents.waitSettled(timeout: 2)
        state.waitUntilPersisted(timeout: 2)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        state.mutate { _ in destination.launchEnding(atMs: now).map { .store($0) } }
        // Once the end is on disk, the launch no longer holds the session (else a later launch ends it abnormal).
        if state.waitUntilPersisted(timeout: 2) { destination.launchEnded() }
    }

    /// The client stopped (`shutdown()`): its launch no longer holds its Sentry session, which a later launch then
    /// ends as it ends a killed launch's (or as its monitor's verdict says).
    func launchEnded() {
        destination.launchEnded()
    }

    /// Called by a crash monitor (CohorlyCrash) once it watches this launch, which it knows as `launchId` (the
    /// insert id of the launch's crash report and abnormal-exit event): the next launch's monitor then tells how
    /// the launch ended. Without one, the next launch takes a launch that did not exit normally for `abnormal`.
    /// `release`, when given, is the release the monitor's events carry: the launch's session carries it too.
    /// Nothing for other destinations.
    package func crashMonitorStarted(launchId: String, release: String? = nil) {
        // On disk before this returns (before the monitor marks the launch): a launch killed right after is still
        // known by its launch id.
        let operations = destination.launchMonitored(launchId: launchId, release: release)
        guard !operations.isEmpty else { return }
        state.waitUntilPersisted(timeout: 2)
        _ = try? store.apply(operations, limit: options.maxQueueSize)
    }

    /// Called by this launch's crash monitor: an earlier launch, `launchId`, ended without crashing at `timeMs`
    /// (a termination signal ended it, or it exec'd another program), so its session ends `exited`.
    package func previousLaunchExited(launchId: String, atMs timeMs: Int64) {
        applyPreviousEnd(.exited(launchId: launchId), atMs: timeMs)
    }

    /// Called by this launch's crash monitor once it has looked at how the earlier launches ended: each session
    /// still waiting for a verdict ends `abnormal` unless `pending(launchId)` says an event still to come ends it
    /// (a crash or hang report of that launch) or that launch still runs.
    package func previousLaunchesExamined(pending: @escaping (String) -> Bool) {
        applyPreviousEnd(.examined(pending: pending), atMs: Int64(Date().timeIntervalSince1970 * 1000))
    }

    /// Commits what the destination makes of an earlier launch's `ending` (as `enqueuePrepared` commits a
    /// prepared record: on disk when this returns, unless the queue could not be written; then the next launch
    /// decides).
    private func applyPreviousEnd(_ ending: PreviousLaunchEnding, atMs timeMs: Int64) {
        guard destination.followsLaunches, !isOptedOut else { return }
        waitUntilPersisted()
        // Read and changed in one write transaction: two launches examining at once never both end a session.
        var changed = false
        let committed = try? store.apply(limit: options.maxQueueSize) { settings in
            let operations = destination.previousLaunchEnded(ending, atMs: timeMs, settings: settings)
            changed = !operations.isEmpty
            return operations
        }
        guard committed != nil, changed else { return }
        delivery.notifyQueued()
    }

    /// The release this client's destination names for the launch (`SentryConfiguration.release`), when it names
    /// one: a crash monitor given no release of its own takes it, so events and sessions agree.
    package var configuredRelease: String? {
        destination.launchRelease
    }

    /// At a normal exit, ends the shared client's Sentry session (registered after `commitAtExit`, so it runs
    /// first).
    private static let endSessionAtExit: Void = {
        atexit { Cohorly.shared?.endSentrySession() }
    }()
}
