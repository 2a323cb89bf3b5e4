/// The seam between the client and a server's wire format: one file family per destination (`CohorlyDestination`
/// for the Cohorly API, `PostHogDestination` for PostHog capture V1), chosen once when the client is made.
///
/// Everything above it is shared: the persisted queue, identity, super properties, opt-out, flush and crash
/// delivery. A destination decides two things:
/// - **encoding**, on the persister thread: what queue records a tracked event, a profile operation or a prepared
///   event becomes (JSON text, its endpoint and its dedupe key);
/// - **delivery**, on the delivery thread: how one batch of queued records is sent, retried and answered, through
///   the `DeliveryContext` the client hands it (transport, cancellable waits, the debug log).
///
/// Contract: encoding never throws for bad input it can report (it returns a `problem` instead, which the client
/// logs naming the event); `deliver` returns only when the batch is finished, kept for later or cancelled, and never
/// waits except through `context.wait`, so `shutdown()`, `reset()` and `optOut()` stop its retries at once.
protocol Destination: AnyObject, Sendable {
    /// The endpoint tracked events are queued for.
    var eventEndpoint: Endpoint { get }
    /// The persisted description the detached crash sender restores the destination from (never the key).
    var persistedDescription: String? { get }
    /// A tracked event as one queue record, or the problem that makes the server refuse it.
    func encode(_ event: PendingEvent, automatic: AutomaticProperties, random: inout FastRandom) -> EncodedRecord
    /// A profile operation as queue records (none, with a `problem`, when this destination has no equivalent).
    func encode(_ operation: ProfileOperation, automatic: AutomaticProperties, random: inout FastRandom)
        -> [EncodedRecord]
    /// A prepared event (its properties complete, `distinct_id` included) as one queue record.
    func encode(prepared event: PreparedEvent) -> EncodedRecord
    /// Sends one batch read from the queue (one endpoint, oldest first, no repeated dedupe key).
    func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome
}

/// One queue record made by a destination.
struct EncodedRecord: Sendable {
    /// Where it goes.
    var endpoint: Endpoint
    /// Its dedupe key (`$insert_id`, or the PostHog uuid); nil for records that are never deduplicated.
    var insertId: String?
    /// The record as JSON text.
    var json: String
    /// Why the server would refuse it (then it is logged and not queued).
    var problem: String?
}

/// A client call that is not a plain event: identity and profile changes, encoded per destination.
enum ProfileOperation: Sendable {
    /// `identify` moved from the anonymous id to `distinctId` (the first identify after being anonymous).
    case identify(anonymousId: String, distinctId: String, set: Properties, setOnce: Properties, time: Int64)
    /// `alias(_:)`: links `alias` to `distinctId`.
    case alias(alias: String, distinctId: String, time: Int64)
    /// A `people` operation (`$set`, `$set_once`, `$add`, `$unset`, `$delete`) with its value.
    case people(operation: String, value: CohorlyValue, distinctId: String, time: Int64)
}

/// What became of one batch.
enum BatchOutcome: Sendable, Equatable {
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
protocol DeliveryContext: AnyObject {
    /// The HTTP transport.
    var transport: any Transport { get }
    /// The client's options.
    var options: CohorlyOptions { get }
    /// Waits `seconds`; false (at once) when the client is stopped, reset or opted out meanwhile.
    func wait(_ seconds: Double) -> Bool
    /// Writes a debug line (only when `debug` is on).
    func log(_ message: String)
}
