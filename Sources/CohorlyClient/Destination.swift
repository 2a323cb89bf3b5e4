/// The seam between the client and a server's wire format: one target family per destination (the Cohorly API's,
/// `CohorlyDestination`, in this module; every other destination in its own module), chosen once when the client
/// is made (the `Cohorly` module's registry restores it for the detached crash sender).
///
/// Everything above it is shared: the persisted queue of wire-neutral records (``RecordKind``), identity, super
/// properties, opt-out, flush and crash delivery. A destination decides:
/// - **admission**, on the persister thread: whether its server would refuse a record (then it is logged and
///   not queued);
/// - **batching and encoding**, on the delivery thread: how many of the oldest queued records one request
///   carries, and what they become on its wire;
/// - **delivery**: how one request's records are sent, retried and answered, through the `DeliveryContext` the
///   client hands it (transport, cancellable waits, the debug log).
///
/// Contract: admission never throws (it returns the problem, which the client logs naming the event); `deliver`
/// returns only when the batch is finished, kept for later or cancelled, and never waits except through
/// `context.wait`, so `shutdown()`, `reset()` and `optOut()` stop its retries at once.
package protocol Destination: AnyObject, Sendable {
    /// The persisted description the detached crash sender restores the destination from (never the key).
    var persistedDescription: String? { get }
    /// Why the server would refuse `event` (nil: it may be queued).
    func problem(with event: EventRecord) -> String?
    /// Why `operation` is not sent to this destination (nil: it is queued).
    func problem(with operation: ProfileOperation) -> String?
    /// Called as an exception record is queued (on the thread queuing it, before it is written): the destination
    /// may add to it what it must send with it, and returns settings changes to commit with it. `meta` reads the
    /// queue's settings.
    func willQueue(_ record: inout QueuedException, meta: (String) -> String?) -> [QueueOperation]
    /// How many of the batch's leading records one request carries (at least 1): the destination's batching rule.
    func requestLength(of batch: QueueBatch) -> Int
    /// The properties a capture item of an earlier version's queue row moved into its `options` (as this
    /// destination's wire names them), read back as properties; none by default.
    var legacyOptionProperties: OptionProperties { get }
    /// Sends one request's records (oldest first, no repeated dedupe key).
    func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome

    // MARK: Launch hooks — what a destination keeps per launch (a release-health session, say) stays in its
    // family: the client and the crash monitor's launch protocol call these, never a destination by name. Each
    // returns the queue operations to commit; the client commits them (docs/internals.md "The launch protocol").

    /// Whether the destination follows launches (then the client commits what the hooks below return).
    var followsLaunches: Bool { get }
    /// The release the destination names for the launch's events, when it names one.
    var launchRelease: String? { get }
    /// A crash monitor watches this launch and knows it as `launchId`; its events carry `release` when given.
    func launchMonitored(launchId: String, release: String?) -> [QueueOperation]
    /// An earlier launch ended (`ending`), as this launch's crash monitor found; `settings` as the queue holds them.
    func previousLaunchEnded(_ ending: PreviousLaunchEnding, atMs timeMs: Int64, settings: any QueueSettings)
        -> [QueueOperation]
    /// This launch is ending normally (an exit) at `timeMs`.
    func launchEnding(atMs timeMs: Int64) -> [QueueOperation]
    /// This launch's end is committed, or the client stopped: it no longer claims to run.
    func launchEnded()
}

/// Properties an item carries as its `options` instead, each with the option's name.
package typealias OptionProperties = [(property: String, option: String)]

/// How an earlier launch ended, as the crash monitor of a later one found.
package enum PreviousLaunchEnding {
    /// The launch its monitor knew as `launchId` ended without a crash (a termination signal, an exec).
    case exited(launchId: String)
    /// The monitor looked at every earlier launch: those `pending(launchId)` names still have an event to come
    /// (a crash or hang report) or still run; the others ended unseen.
    case examined(pending: (String) -> Bool)
}

package extension Destination {
    func problem(with event: EventRecord) -> String? { nil }
    func problem(with operation: ProfileOperation) -> String? { nil }
    func willQueue(_ record: inout QueuedException, meta: (String) -> String?) -> [QueueOperation] { [] }
    func requestLength(of batch: QueueBatch) -> Int { batch.count }
    var legacyOptionProperties: OptionProperties { [] }
    var followsLaunches: Bool { false }
    var launchRelease: String? { nil }
    func launchMonitored(launchId: String, release: String?) -> [QueueOperation] { [] }
    func previousLaunchEnded(_ ending: PreviousLaunchEnding, atMs timeMs: Int64, settings: any QueueSettings)
        -> [QueueOperation]
    { [] }
    func launchEnding(atMs timeMs: Int64) -> [QueueOperation] { [] }
    func launchEnded() {}
}

/// What became of one batch.
package enum BatchOutcome: Sendable, Equatable {
    /// Every record reached a terminal answer (delivered, or dropped as the destination's rules say; the
    /// destination logged which and why). `delivered`: the server accepted the request (resets the backoff).
    case finished(delivered: Bool)
    /// The request was too large (413) with more than one record: send batches of `size` from now on;
    /// `removable` finished in earlier attempts.
    case halve(size: Int, removable: [Int64])
    /// Some records (`removable`) are finished; the rest stay queued and are tried again after `delay` seconds.
    /// Flushes waiting on them return false.
    case keep(removable: [Int64], delay: Double, reason: String)
    /// The client stopped, reset or opted out while retries were pending: `removable` are finished, the rest
    /// stay queued untouched.
    case cancelled(removable: [Int64])
}

/// What the client lends a destination while it delivers a batch.
package protocol DeliveryContext: AnyObject {
    /// The HTTP transport.
    var transport: any Transport { get }
    /// The client's options.
    var options: CohorlyOptions { get }
    /// Waits `seconds`; false (at once) when the client is stopped, reset or opted out meanwhile.
    func wait(_ seconds: Double) -> Bool
    /// Writes a debug line (only when `debug` is on).
    func log(_ message: String)
    /// Reports a configuration problem the server's answer shows (a wrong path, a refused key): once per launch and
    /// `key`, with or without `debug`, to the log handler or stderr.
    func warnOnce(_ key: String, _ message: String)
}
