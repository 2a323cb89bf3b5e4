import Foundation

extension Cohorly {
    /// Calls `observer` now, then after every change of the distinct id (`identify`, `reset`) or of the opt-out
    /// state, in order. Used by CohorlyCrash to keep the crash-time context current. The observer runs with the
    /// client's state lock held: it must be quick and must not call back into the client.
    package func observeIdentity(_ observer: @escaping @Sendable (_ distinctId: String, _ optedOut: Bool) -> Void) {
        state.addIdentityObserver(observer)
    }

    /// Calls `observer` now, then after every change of the super properties (`register`, `unregister`,
    /// `reset`), in order, with all of them. Used by CohorlyCrash so crash events carry the super properties
    /// of the moment of the crash. Same rules as ``observeIdentity(_:)``.
    package func observeSuperProperties(_ observer: @escaping @Sendable (Properties) -> Void) {
        state.addSuperPropertiesObserver(observer)
    }

    /// Calls `observer` after every `track` (event name and properties, on the caller's thread, whether or not
    /// the event was queued), and after every `identify` that changed the distinct id, `alias` that was queued
    /// and `reset`. Used by CohorlyCrash to keep breadcrumbs. It runs on the calling thread of `track` and
    /// friends, outside the client's locks: it must be quick (it is on the track path) and must not call back
    /// into the client. Observers are kept for the client's lifetime.
    package func observeActivity(_ observer: @escaping @Sendable (ClientActivity) -> Void) {
        activity.add(observer)
    }

    /// The directory of the persisted queue.
    package var storageDirectoryPath: String? {
        (options.storageDirectory ?? Self.defaultStorageDirectory()).path
    }

    /// The project token the client sends (handed to the detached crash sender; never logged).
    package var projectToken: String? { token }
}
