import CohorlyCrashModel
import CohorlyJSON
import CohorlySymbols

/// What `cohorly symbolicate FILE` was given, told apart by its JSON: a crash report (an object with `format`),
/// one `$exception` event (an object with `event` and `properties`, or the bare properties with
/// the exception list, `CapturedException.exceptionListProperty`), or a list of events (an array, or a wrapper holding one under `events` — as
/// `cohorly events list --json` prints — or `results` — as PostHog's events API answers). Every crash becomes
/// the same ``CapturedException``, so a report and an event are symbolicated and printed by one path. Both are
/// read straight from the bytes into the crash (no JSON tree of the file): one pass over the top level finds the
/// shape, a second reads it.
enum SymbolicateInput {
    /// One crash to symbolicate and the lines naming where it came from (empty for a report).
    struct Crash {
        var header: [String]
        var input: CapturedException
    }

    /// The document's shape, found from its top level.
    private enum Shape: Equatable {
        /// A report, or not JSON at all: the report reader says what is wrong with it.
        case report
        /// An array of events.
        case list
        /// An object holding the events under this member.
        case wrapper(String)
        /// One event (or not one at all).
        case event
    }

    /// The crashes in `bytes` (read from `name`) and whether the input was a list (printed as a JSON array).
    static func crashes(_ bytes: [UInt8], name: String) throws(ReportError) -> (crashes: [Crash], isList: Bool) {
        let shape = (try? CohorlyValue.read(bytes, Self.shape)) ?? .report
        if shape == .report {
            let report = try CrashReport.read(bytes, name: name)
            return ([Crash(header: [], input: CapturedException(report: report))], false)
        }
        let read: (crashes: [Crash], count: Int)
        do {
            read = try CohorlyValue.read(bytes) { reader throws(JSONReadError) in try events(&reader, shape) }
        } catch {
            throw ReportError(reason: "\(name): \(error)")
        }
        if shape == .event {
            guard let crash = read.crashes.first else {
                throw ReportError(
                    reason:
                        "\(name): neither a crash report (format \(CrashReportFormat.current)) nor an $exception event")
            }
            return ([crash], false)
        }
        guard !read.crashes.isEmpty else {
            throw ReportError(reason: "\(name): no $exception event among the \(read.count) events")
        }
        return (read.crashes, true)
    }

    /// The shape, from the top level's members (their values skipped, nothing built). As the document would be
    /// read: a `format` member makes a report; else an array, or the last `events` (else `results`) member being
    /// an array, makes a list.
    private static func shape(_ reader: inout JSONReader) throws(JSONReadError) -> Shape {
        switch try reader.peek() {
        case .array:
            try reader.skipValue()
            return .list
        case .object: break
        default:
            try reader.skipValue()
            return .event
        }
        var format = false
        var lists: [String: Bool] = [:]
        try reader.readObject { reader, key throws(JSONReadError) in
            format = format || key == "format"
            if key == "events" || key == "results" { lists[key] = try reader.peek() == .array }
            try reader.skipValue()
        }
        if format { return .report }
        if lists["events"] == true { return .wrapper("events") }
        if lists["results"] == true { return .wrapper("results") }
        return .event
    }

    /// The crashes of a document of that shape, and how many values its list held.
    private static func events(_ reader: inout JSONReader, _ shape: Shape) throws(JSONReadError)
        -> (crashes: [Crash], count: Int)
    {
        var found: (crashes: [Crash], count: Int) = ([], 0)
        func list(_ reader: inout JSONReader) throws(JSONReadError) {
            found = ([], 0)
            try reader.readArray { reader throws(JSONReadError) in
                found.count += 1
                if let event = try CapturedException.readEvent(&reader) { found.crashes.append(crash(event)) }
            }
        }
        switch shape {
        case .list: try list(&reader)
        case .wrapper(let member):
            // The last member of that name is an array (the shape says so): it is the one kept.
            try reader.readObject { reader, key throws(JSONReadError) in
                if key == member, try reader.peek() == .array { return try list(&reader) }
                try reader.skipValue()
            }
        case .event, .report:
            if let event = try CapturedException.readEvent(&reader) { found.crashes.append(crash(event)) }
        }
        return found
    }

    /// An event as a crash, with its header lines.
    private static func crash(_ event: CapturedException.ReadEvent) -> Crash {
        var header: [String] = []
        if let id = event.id { header.append("Event: \(id)") }
        if let release = event.release { header.append("Release: \(release)") }
        return Crash(header: header, input: event.crash)
    }
}
