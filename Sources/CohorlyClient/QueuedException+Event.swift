import CohorlyCrashModel

/// The `$exception` event of a record: the one shape the Cohorly API and the destinations taking it receive,
/// written by the crash model (``CapturedException/eventProperties``) beside its one reader.
extension QueuedException {
    /// The event name.
    public static let eventName = CapturedException.eventName
    /// The event property holding the breadcrumbs.
    public static let breadcrumbsProperty = CapturedException.breadcrumbsProperty
    /// The per-frame member carrying the frame's kind, so no server re-guesses which address is a return address
    /// (a server that does not know the member drops it).
    public static let frameKindKey = CapturedException.frameKindKey
    /// The `stacktrace` member telling why the async walk of that thread stopped.
    public static let asyncStopKey = CapturedException.asyncStopKey

    /// The `$exception` event (``CapturedException/eventProperties``).
    public var event: PreparedEvent { PreparedEvent(name: Self.eventName, properties: exception.eventProperties) }

    /// The size of the `$exception` event's JSON: what one request must have room for.
    var eventBytes: Int { EventRecord(prepared: event).json.utf8.count }
}
