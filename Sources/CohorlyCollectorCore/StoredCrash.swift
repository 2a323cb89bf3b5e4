import CohorlyCrashModel

/// How the collector stores an `$exception` event: the crash model's own JSON (``CapturedException/jsonValue``)
/// in the events' `crash` column, inside `{"version": 1, "exception": …, "facts": …, "absent": […]}` (`facts`: what
/// the reason was decided from, which the model's JSON leaves out: the signal, the C++ exception, the description
/// the event gave), and in the `properties`
/// column only the members the model does not give back as they arrived. The event's properties are read back as
/// the model's rendering of them (``CapturedException/eventProperties``, the PostHog `$exception` writer), those
/// stored members over it, without the members the event did not have (`absent`): the same properties, member
/// for member, as the event had when it arrived (so `GET /api/events` answers as before); a crash of the
/// device's own making has all of its `$exception…` members rendered, none kept beside the model, and so has one
/// read as received (``CapturedException/init(receivedEvent:)``, a Sentry event): its exception list, threads and
/// breadcrumbs are the model's, as they arrived. Both differences are a ``CapturedException/SentDifference``.
///
/// Columns the collector queries stay columns (`event`, `distinct_id`, `time`, `insert_id`, `token`).
enum StoredCrash {
    /// The version of the `crash` column's JSON.
    static let version = 1

    /// The two columns of a crash.
    struct Columns {
        /// `crash`: the versioned model.
        var crash: String
        /// `properties`: what the model does not say.
        var properties: String
    }

    /// The columns of `crash`, which arrived with `properties` (an object).
    static func columns(_ crash: CapturedException, properties: JSONValue) -> Columns {
        let model = crash.jsonValue
        // Rendered from the model as it will be read back, so what is left out is what reading gives.
        let rendered = (CapturedException(jsonValue: model) ?? crash).eventProperties
        let difference = CapturedException.SentDifference(rendered: rendered, sent: properties.objectValue ?? [:])
        var value: [String: JSONValue] = ["version": .int(version), "exception": model, "facts": facts(crash.facts)]
        if !difference.absent.isEmpty { value["absent"] = .array(difference.absent.map(JSONValue.string)) }
        return Columns(
            crash: JSONValue.object(value).jsonString, properties: JSONValue.object(difference.kept).jsonString)
    }

    /// The crash of a `crash` column; nil when it is not one this collector reads.
    static func crash(_ column: String) -> CapturedException? {
        JSONValue(json: column).flatMap(crash(value:))
    }

    /// The crash of a `crash` column whose event's properties (as read back, ``properties(crash:properties:)``)
    /// are `propertiesJSON`. The model the collector stores is always read from an event, so it holds the event's
    /// exception list (``CapturedException/exceptionList``); a column written before the model kept the list
    /// has none, and gets it from the properties (where the list was kept whole when it was not the model's
    /// rendering).
    static func crash(_ column: String, propertiesJSON: String) -> CapturedException? {
        guard var crash = crash(column) else { return nil }
        if crash.exceptionList == .rendered {
            crash.exceptionList = CapturedException.exceptionList(
                ofEvent: JSONValue(json: propertiesJSON) ?? .object([:]))
        }
        return crash
    }

    private static func crash(value: JSONValue) -> CapturedException? {
        guard value["version"]?.intValue == version, let model = value["exception"],
            var crash = CapturedException(jsonValue: model)
        else { return nil }
        if let facts = value["facts"] { crash.facts = Self.facts(facts) }
        return crash
    }

    /// What a crash's reason is decided from, as an event's reader finds it (``CapturedException/init(exceptionEvent:)``:
    /// a signal, a C++ exception, the description the event gave).
    private static func facts(_ facts: CrashReason.Facts) -> JSONValue {
        var value: [String: JSONValue] = [:]
        if let signal = facts.signal {
            value["signal"] = [
                "number": .int(Int(signal.number)), "name": .string(signal.name), "code": .int(Int(signal.code)),
                "address": signal.address.json,
            ]
        }
        if let cxx = facts.cxx { value["cxx"] = ["type": .string(cxx.type), "what": .string(cxx.what)] }
        if let given = facts.given {
            value["given"] = [
                "type": .string(given.type), "value": .string(given.value), "mechanism": .string(given.mechanism),
                "issue_name": given.issueName.map(JSONValue.string) ?? .null, "source": .string(given.source),
            ]
        }
        if let message = facts.message { value["message"] = .string(message) }
        if facts.stackOverflow { value["stack_overflow"] = true }
        return .object(value)
    }

    private static func facts(_ value: JSONValue) -> CrashReason.Facts {
        var facts = CrashReason.Facts()
        if let signal = value["signal"] {
            facts.signal = CrashReport.Signal(
                number: signal["number"]?.intValue.flatMap { Int32(exactly: $0) } ?? 0,
                name: signal["name"]?.stringValue ?? "",
                code: signal["code"]?.intValue.flatMap { Int32(exactly: $0) } ?? 0,
                address: Address(json: signal["address"]) ?? Address(0))
        }
        if let cxx = value["cxx"] {
            facts.cxx = CrashReport.CxxException(
                type: cxx["type"]?.stringValue ?? "", what: cxx["what"]?.stringValue ?? "")
        }
        if let given = value["given"] {
            facts.given = CrashDescription(
                type: given["type"]?.stringValue ?? "", value: given["value"]?.stringValue ?? "",
                mechanism: given["mechanism"]?.stringValue ?? "", issueName: given["issue_name"]?.stringValue,
                source: given["source"]?.stringValue ?? "signal")
        }
        facts.message = value["message"]?.stringValue
        facts.stackOverflow = value["stack_overflow"] == .bool(true)
        return facts
    }

    /// The event's properties as they arrived, from its two columns; nil when the crash column cannot be read.
    static func properties(crash column: String, properties: String) -> JSONValue? {
        guard let value = JSONValue(json: column), let crash = crash(value: value) else { return nil }
        let difference = CapturedException.SentDifference(
            kept: JSONValue(json: properties)?.objectValue ?? [:],
            absent: (value["absent"]?.arrayValue ?? []).compactMap(\.stringValue))
        return .object(difference.applied(to: crash.eventProperties))
    }
}
