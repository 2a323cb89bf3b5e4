import CohorlyCrashModel

/// The edge of the wires that carry PostHog's event shape — the Cohorly API's `/track`, capture V1 and the legacy
/// `/batch`, `/e`, `/capture` (Ingestion.swift here, the others in Sources/CohorlyPostHogIngestion): an
/// `$exception` event's crash is decoded here, once, as it arrives, by the crash model's one reader of that shape
/// (``CapturedException/init(exceptionEvent:)``). Sentry's envelopes decode theirs in Sources/CohorlySentryIngestion.
extension CollectorStore.NewEvent {
    /// The event a PostHog-shaped wire received, its properties parsed (their text is written when it is stored,
    /// ``CollectorStore/insert(writing:receivedAt:)``) and, for an `$exception`, its crash decoded.
    package static func received(
        token: String, event: String, distinctId: String, time: Int64, insertId: String?, properties: JSONValue
    ) -> Self {
        Self(
            token: token, event: event, distinctId: distinctId, time: time, insertId: insertId, propertiesJSON: "",
            properties: properties, crash: Self.crash(event: event, properties: properties),
            fingerprint: properties[Self.fingerprintProperty])
    }

    /// The property holding the fingerprint a sender chose (IssueKey.swift reads it).
    package static let fingerprintProperty = "$exception_fingerprint"

    /// The crash of an event of PostHog's shape, its exception list and threads held as they arrived
    /// (``CapturedException/init(receivedEvent:)``): nil unless it is an `$exception`.
    package static func crash(event: String, properties: JSONValue) -> CapturedException? {
        event == CapturedException.eventName ? CapturedException(receivedEvent: properties) : nil
    }

    /// The crash the issue grouping files and its fingerprint: the ones decoded at the edge, else (an event made
    /// without them) its properties read as that shape.
    var decodedCrash: (crash: CapturedException, fingerprint: JSONValue?)? {
        if let crash { return (crash, fingerprint) }
        guard event == CapturedException.eventName, let properties = properties ?? JSONValue(json: propertiesJSON)
        else { return nil }
        return (CapturedException(exceptionEvent: properties), properties[Self.fingerprintProperty])
    }
}
