import Foundation

/// The launch hooks (``Destination``'s): the client and a crash monitor say how launches start and end, and the
/// destination decides what that means on its wire. Nothing here names a destination.
extension Cohorly {
    /// Commits the operations `decide` makes from the queue's settings, read in the same write transaction, as a
    /// destination's launch starts (on disk before this returns: a launch that crashes or is killed at once still
    /// has it); false when the queue could not be written.
    package func commitLaunchStart(_ decide: (any QueueSettings) -> [QueueOperation]) -> Bool {
        state.waitUntilPersisted(timeout: 2)
        guard (try? store.apply(limit: options.maxQueueSize, decide)) != nil else { return false }
        delivery.notifyQueued()
        return true
    }

    /// Ends this launch as a normal exit for a destination that follows launches and commits what it makes of it,
    /// waiting at most 2 s (and as long for the handled errors queued before, which count in it). Nothing for
    /// other destinations.
    package func endLaunch() {
        guard destination.followsLaunches else { return }
        // The handled errors queued before count in it.
        liveEvents.waitSettled(timeout: 2)
        state.waitUntilPersisted(timeout: 2)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        state.mutate { _ in destination.launchEnding(atMs: now).map { .store($0) } }
        // Once the end is on disk, the launch no longer holds it (else a later launch ends it abnormal).
        if state.waitUntilPersisted(timeout: 2) { destination.launchEnded() }
    }

    /// The client stopped (`shutdown()`): its launch no longer claims to run; a later launch ends it as it ends a
    /// killed launch's (or as its monitor's verdict says).
    func launchEnded() {
        destination.launchEnded()
    }

    /// Called by a crash monitor (CohorlyCrash) once it watches this launch, which it knows as `launchId` (the
    /// insert id of the launch's crash report and abnormal-exit event): the next launch's monitor then tells how
    /// the launch ended. Without one, the next launch takes a launch that did not exit normally for `abnormal`.
    /// `release`, when given, is the release the monitor's events carry: what the destination keeps of the launch
    /// carries it too. Nothing for destinations that do not follow launches.
    package func crashMonitorStarted(launchId: String, release: String? = nil) {
        // On disk before this returns (before the monitor marks the launch): a launch killed right after is still
        // known by its launch id.
        let operations = destination.launchMonitored(launchId: launchId, release: release)
        guard !operations.isEmpty else { return }
        state.waitUntilPersisted(timeout: 2)
        _ = try? store.apply(operations, limit: options.maxQueueSize)
    }

    /// Called by this launch's crash monitor: an earlier launch, `launchId`, ended without crashing at `timeMs`
    /// (a termination signal ended it, or it exec'd another program): it ends `exited`.
    package func previousLaunchExited(launchId: String, atMs timeMs: Int64) {
        applyPreviousEnd(.exited(launchId: launchId), atMs: timeMs)
    }

    /// Called by this launch's crash monitor once it has looked at how the earlier launches ended: each launch
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
        // Read and changed in one write transaction: two launches examining at once never both end one.
        var changed = false
        let committed = try? store.apply(limit: options.maxQueueSize) { settings in
            let operations = destination.previousLaunchEnded(ending, atMs: timeMs, settings: settings)
            changed = !operations.isEmpty
            return operations
        }
        guard committed != nil, changed else { return }
        delivery.notifyQueued()
    }

    /// The release this client's destination names for the launch, when it names one: a crash monitor given no
    /// release of its own takes it, so events and what the destination keeps of the launch agree.
    package var configuredRelease: String? {
        destination.launchRelease
    }
}
