import CohorlyCrashModel

/// A prepared exception — a crash, a handled error, a hang, an abnormal exit — as the queue holds it: the crash
/// model's ``CapturedException`` (its one owner: frames with their kinds, async callers, symbols, images), with
/// the properties the client adds when it queues it (`distinct_id`, super and automatic properties, what a
/// destination adds in `willQueue`). Every destination renders its own schema from ``exception`` when it sends
/// it (the Cohorly API: the `$exception` event, ``event``; others their own wire's). CohorlyCrash builds it;
/// nothing reads it back out of properties. The exception's members read and write through the record:
/// `record.insertId` (the dedupe key, stable across resends), `record.timestampMs`, `record.level`,
/// `record.properties` (the crash-time context, what the client adds, and the facts destinations pass on as they
/// are).
@dynamicMemberLookup
public struct QueuedException: Sendable, Equatable {
    /// The exception.
    public var exception: CapturedException

    /// A record of `exception`. It keeps the reason as decided (``CapturedException/description``), not what it
    /// was decided from: its facts become the description as given.
    public init(_ exception: CapturedException) {
        self.exception = exception
        self.exception.facts = CrashReason.Facts(given: exception.description)
    }

    /// A member of ``exception``, read and written through the record.
    public subscript<Value>(dynamicMember member: WritableKeyPath<CapturedException, Value>) -> Value {
        get { exception[keyPath: member] }
        set { exception[keyPath: member] = newValue }
    }

    /// The distinct id it is about (set by the client when it is queued).
    public var distinctId: String? { exception.properties["distinct_id"]?.stringValue }
}
