import CohorlyCrashModel

/// A prepared exception — a crash, a handled error, a hang, an abnormal exit — as the queue holds it: the crash
/// model's ``CapturedException`` (its one owner: frames with their kinds, async callers, symbols, images), with
/// the properties the client adds when it queues it (`distinct_id`, super and automatic properties, a Sentry
/// session). Every destination renders its own schema from ``exception`` when it sends it (the Cohorly API and
/// PostHog: the `$exception` event, ``event``; Sentry: its native event). CohorlyCrash builds it; nothing reads it
/// back out of properties.
public struct ExceptionRecord: Sendable, Equatable {
    /// The exception.
    public var exception: CapturedException

    /// A record of `exception`. It keeps the reason as decided (``CapturedException/description``), not what it
    /// was decided from: its facts become the description as given.
    public init(_ exception: CapturedException) {
        self.exception = exception
        self.exception.facts = CrashReason.Facts(given: exception.description)
    }

    /// The dedupe key (`$insert_id`): stable across resends.
    public var insertId: String {
        get { exception.insertId }
        set { exception.insertId = newValue }
    }

    /// When it happened, unix milliseconds.
    public var timestampMs: Int64 {
        get { exception.timestampMs }
        set { exception.timestampMs = newValue }
    }

    /// `fatal`, `error`, …
    public var level: String {
        get { exception.level }
        set { exception.level = newValue }
    }

    /// The properties the event carries besides the exception: the crash-time context (release, device,
    /// identity, super properties), what the client adds, and the facts destinations pass on as they are
    /// (`$exception_pid`, a hang's duration, …).
    public var properties: Properties {
        get { exception.properties }
        set { exception.properties = newValue }
    }

    /// The distinct id it is about (set by the client when it is queued).
    public var distinctId: String? { properties["distinct_id"]?.stringValue }
}
