import CohorlyCrashModel
import CohorlyJSON
import CohorlySymbols

/// What `cohorly symbolicate FILE` was given, told apart by its JSON: a crash report (an object with `format`),
/// one `$exception` event (an object with `event` and `properties`, or the bare properties with
/// `$exception_list`), or a list of events (an array, or a wrapper holding one under `events` — as
/// `cohorly events list --json` prints — or `results` — as PostHog's events API answers). Every crash becomes
/// the same ``CapturedException``, so a report and an event are symbolicated and printed by one path.
enum SymbolicateInput {
    /// One crash to symbolicate and the lines naming where it came from (empty for a report).
    struct Crash {
        var header: [String]
        var input: CapturedException
    }

    /// The crashes in `bytes` (read from `name`) and whether the input was a list (printed as a JSON array).
    static func crashes(_ bytes: [UInt8], name: String) throws(ReportError) -> (crashes: [Crash], isList: Bool) {
        guard !isReport(bytes), let document = CohorlyValue(bytes: bytes) else {
            // A report, or not JSON at all: the report reader says what is wrong with it (read straight into the
            // model: no JSON tree of the whole file).
            let report = try CrashReport.read(bytes, name: name)
            return ([Crash(header: [], input: CapturedException(report: report))], false)
        }
        if let list = document.arrayValue ?? document["events"]?.arrayValue ?? document["results"]?.arrayValue {
            let crashes = list.compactMap(crash)
            guard !crashes.isEmpty else {
                throw ReportError(reason: "\(name): no $exception event among the \(list.count) events")
            }
            return (crashes, true)
        }
        guard let crash = crash(document) else {
            throw ReportError(
                reason:
                    "\(name): neither a crash report (format \(CrashReportFormat.current)) nor an $exception event")
        }
        return ([crash], false)
    }

    /// Whether `bytes` hold an object with a `format` member (or are not JSON): looked at without building
    /// anything.
    private static func isReport(_ bytes: [UInt8]) -> Bool {
        do {
            return try CohorlyValue.read(bytes) { reader throws(JSONReadError) in
                guard try reader.peek() == .object else {
                    try reader.skipValue()
                    return false
                }
                var format = false
                try reader.readObject { reader, key throws(JSONReadError) in
                    format = format || key == "format"
                    try reader.skipValue()
                }
                return format
            }
        } catch {
            return true
        }
    }

    /// An `$exception` event (or its bare properties) as a crash; nil for any other event or value.
    private static func crash(_ event: CohorlyValue) -> Crash? {
        let properties = event["properties"] ?? event
        guard properties["$exception_list"]?.arrayValue != nil,
            event["event"] == nil || event["event"] == .string("$exception")
        else { return nil }
        var header: [String] = []
        let id = event["uuid"] ?? event["insert_id"] ?? properties["$insert_id"]
        if let id = id?.stringValue { header.append("Event: \(id)") }
        if let release = properties["release"]?.stringValue ?? properties["$app_version"]?.stringValue {
            header.append("Release: \(release)")
        }
        return Crash(header: header, input: CapturedException(exceptionEvent: properties))
    }
}
