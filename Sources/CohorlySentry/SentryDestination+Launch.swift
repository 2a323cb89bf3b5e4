import CohorlyClient

/// Sentry's launch hooks: each launch is a release-health session (``SentrySessions``), started by the client made
/// for Sentry, ended here as the launch protocol finds how each launch ended.
extension SentryDestination {
    var followsLaunches: Bool { configuration.sessions }

    var launchRelease: String? {
        guard let release = configuration.release, !release.isEmpty else { return nil }
        return release
    }

    func launchMonitored(launchId: String, release: String?) -> [QueueOperation] {
        (release.map { sessions.launchRelease($0) } ?? []) + sessions.monitored(by: launchId)
    }

    func previousLaunchEnded(_ ending: PreviousLaunchEnding, atMs timeMs: Int64, settings: any QueueSettings)
        -> [QueueOperation]
    {
        switch ending {
        case .exited(let launchId): sessions.previousExited(launchId: launchId, atMs: timeMs, settings: settings)
        case .examined(let pending): sessions.previousExamined(pending: pending, atMs: timeMs, settings: settings)
        }
    }

    func launchEnding(atMs timeMs: Int64) -> [QueueOperation] { sessions.exit(atMs: timeMs) }

    func launchEnded() { sessions.launchLock?.release() }
}
