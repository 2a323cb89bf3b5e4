import Synchronization

/// Something the app asked the client to do, as ``Cohorly/observeActivity(_:)`` reports it (CohorlyCrash keeps
/// the last ones as breadcrumbs).
package enum ClientActivity: Sendable {
    /// `track(event, properties:)` (reported whether or not the event was queued).
    case track(event: String, properties: Properties)
    /// `identify` switched to `distinctId`.
    case identify(distinctId: String)
    /// `alias` linked `alias` to `distinctId`.
    case alias(alias: String, distinctId: String)
    /// `reset` started over as the anonymous `distinctId`.
    case reset(distinctId: String)
}

/// The activity observers of one client. Without observers a report costs one atomic load.
final class ActivityObservers: Sendable {
    private let observers = Mutex<[@Sendable (ClientActivity) -> Void]>([])
    private let any = Atomic<Bool>(false)

    func add(_ observer: @escaping @Sendable (ClientActivity) -> Void) {
        observers.withLock { $0.append(observer) }
        any.store(true, ordering: .releasing)
    }

    /// Calls every observer on the caller's thread, outside any lock of the client. `activity` is only built
    /// when someone listens.
    func report(_ activity: @autoclosure () -> ClientActivity) {
        guard any.load(ordering: .acquiring) else { return }
        let current = observers.withLock { $0 }
        let value = activity()
        for observer in current { observer(value) }
    }
}
