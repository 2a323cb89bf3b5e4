/// Why bytes are not a readable crash report.
public enum CrashReportError: Error, Equatable, CustomStringConvertible {
    /// Not JSON, or a required member is missing or of the wrong type.
    case corrupt(reason: String)
    /// A report of a format this reader does not know.
    case unsupportedFormat(String)

    /// The problem in a few words.
    public var description: String {
        switch self {
        case .corrupt(let reason): reason
        case .unsupportedFormat(let format): "unsupported report format \"\(format)\""
        }
    }
}

extension CrashReport {
    /// Reads a report file's bytes (format v1 or v2). Members after the header may be missing (a salvaged
    /// report); a member of the wrong type reads as missing. Never traps, whatever the bytes; memory follows what
    /// the report keeps (its frames are read straight into the model, no JSON tree of the whole file is built).
    /// - Parameter requiringHeader: whether `insert_id`, `timestamp_ms` and `pid` must be there (a report to
    ///   send needs them; `cohorly symbolicate` also reads hand-made reports without them).
    /// - Throws: ``CrashReportError``.
    public static func read(_ bytes: [UInt8], requiringHeader: Bool = true) throws(CrashReportError) -> CrashReport {
        let members: CrashReportStreaming.Members?
        do {
            members = try CohorlyValue.read(bytes, CrashReportStreaming.document)
        } catch {
            throw .corrupt(reason: error.description)
        }
        guard let members else { throw .corrupt(reason: "not a JSON object") }
        var report = try header(members.scalars, requiringHeader: requiringHeader)
        report.crashedThread = members.crashedThread
        report.context = members.context
        report.threads = members.threads
        report.modules = members.modules
        report.breadcrumbs = members.breadcrumbs
        report.taskContext = members.taskContext
        return report
    }

    /// Reads a report from its parsed JSON (format v1 or v2); see ``read(_:requiringHeader:)-([UInt8],_)``.
    /// - Throws: ``CrashReportError``.
    public static func read(_ document: CohorlyValue, requiringHeader: Bool = true) throws(CrashReportError)
        -> CrashReport
    {
        guard case .object(let members) = document else { throw .corrupt(reason: "not a JSON object") }
        var report = try header(members, requiringHeader: requiringHeader)
        if let crashed = members["crashed_thread"], crashed.objectValue != nil {
            report.crashedThread = Self.thread(crashed)
        }
        report.context = members["context"]?.objectValue ?? [:]
        report.threads = (members["threads"]?.arrayValue ?? []).filter { $0.objectValue != nil }.map(Self.thread)
        report.modules = (members["modules"]?.arrayValue ?? []).compactMap(Self.module)
        report.breadcrumbs = members["breadcrumbs"]?.arrayValue.map { $0.compactMap(Self.breadcrumb) }
        report.taskContext = members["task_context"]?.objectValue
        return report
    }

    /// Everything but the threads, modules, context and breadcrumbs, from the report's members.
    private static func header(_ members: [String: CohorlyValue], requiringHeader: Bool) throws(CrashReportError)
        -> CrashReport
    {
        guard let format = members["format"]?.stringValue else { throw .corrupt(reason: "missing \"format\"") }
        guard CrashReportFormat.readable.contains(format) else { throw .unsupportedFormat(format) }
        let insertId = members["insert_id"]?.stringValue
        let timestampMs = members["timestamp_ms"].flatMap(Self.unsigned)
        let pid = members["pid"]?.intValue.flatMap { Int32(exactly: $0) }
        if requiringHeader {
            if insertId == nil { throw .corrupt(reason: "missing \"insert_id\"") }
            if timestampMs == nil { throw .corrupt(reason: "missing \"timestamp_ms\"") }
            if pid == nil { throw .corrupt(reason: "missing \"pid\"") }
        }
        var report = CrashReport(
            insertId: insertId ?? "", timestampMs: timestampMs ?? 0, pid: pid ?? 0,
            executable: members["executable"]?.stringValue ?? "",
            mechanism: members["mechanism"]?.stringValue.flatMap(Mechanism.init(rawValue:)) ?? .signal)
        report.format = format
        if let signal = members["signal"] { report.signal = Self.signal(signal) }
        report.message = members["message"]?.stringValue
        if let cxx = members["cxx"]?.objectValue {
            report.cxx = CxxException(type: cxx["type"]?.stringValue ?? "", what: cxx["what"]?.stringValue ?? "")
        }
        report.stackOverflow = members["stack_overflow"] == .bool(true)
        report.threadsRequested = members["threads_requested"]?.intValue
        report.threadsAnswered = members["threads_answered"]?.intValue
        report.captureNs = members["capture_ns"].flatMap(Self.unsigned)
        report.complete = members["complete"] == .bool(true)
        report.recrashSignal = members["recrash_signal"]?.intValue.flatMap { Int32(exactly: $0) }
        report.hang = members["hang"].flatMap(Self.hang)
        report.breadcrumbsDropped = members["breadcrumbs_dropped"]?.intValue
        report.task = members["task"].flatMap(Self.unsigned)
        return report
    }

    static func unsigned(_ value: CohorlyValue) -> UInt64? { value.intValue.flatMap { UInt64(exactly: $0) } }

    static func int32(_ value: CohorlyValue?) -> Int32 { value?.intValue.flatMap { Int32(exactly: $0) } ?? 0 }

    private static func signal(_ value: CohorlyValue) -> Signal {
        Signal(
            number: int32(value["number"]), name: value["name"]?.stringValue ?? "", code: int32(value["code"]),
            address: Address(json: value["address"]) ?? Address(0))
    }

    /// A thread; in a salvaged report a thread cut short keeps the frames written so far and counts as truncated.
    static func thread(_ value: CohorlyValue) -> Thread {
        var registers: [String: Address]?
        if let written = value["registers"]?.objectValue {
            registers = written.compactMapValues { Address(json: $0) }
        }
        let frames = frames(value["frames"], positional: true)
        return Thread(
            tid: int32(value["tid"]), name: value["name"]?.stringValue ?? "", crashed: value["crashed"] == .bool(true),
            frames: frames, truncated: value["truncated"].map { $0 == .bool(true) } ?? true, registers: registers,
            async: asyncChain(value["async"], physicalCount: frames.count))
    }

    /// Frames as v2 writes them (`{"addr", "kind"}`) or v1 (bare strings: frame 0 `pc`, the rest return
    /// addresses, when `positional`; else `async_resume`). An unknown kind reads as a return address.
    static func frames(_ value: CohorlyValue?, positional: Bool) -> [Frame] {
        var frames: [Frame] = []
        for element in value?.arrayValue ?? [] {
            if case .object(let frame) = element {
                guard let address = Address(json: frame["addr"]) else { continue }
                let fallback: Frame.Kind = positional ? .returnAddress : .asyncResume
                frames.append(Frame(address, kind: frame["kind"]?.stringValue.map(Frame.Kind.init) ?? fallback))
            } else if let address = Address(json: element) {
                let kind: Frame.Kind = positional ? (frames.isEmpty ? .pc : .returnAddress) : .asyncResume
                frames.append(Frame(address, kind: kind))
            }
        }
        return frames
    }

    /// The `async` member; nil when absent, empty, or when its anchor is not one of the physical frames (a
    /// torn or invalid chain never costs the physical stack: it is dropped alone).
    static func asyncChain(_ value: CohorlyValue?, physicalCount: Int) -> AsyncChain? {
        guard let value else { return nil }
        return asyncChain(value, frames: frames(value["frames"], positional: false), physicalCount: physicalCount)
    }

    /// The `async` member with its frames already read.
    static func asyncChain(_ value: CohorlyValue, frames: [Frame], physicalCount: Int) -> AsyncChain? {
        guard let anchor = value["anchor"]?.intValue, anchor >= 0, anchor < physicalCount else { return nil }
        let frames = Array(frames.prefix(AsyncChain.maximumFrames))
        guard !frames.isEmpty else { return nil }
        return AsyncChain(
            anchor: anchor, stop: AsyncChain.Stop(wireName: value["stop"]?.stringValue ?? ""), frames: frames)
    }

    /// A module; in a salvaged report a module cut short has no build id and size 0.
    static func module(_ value: CohorlyValue) -> Module? {
        guard value.objectValue != nil else { return nil }
        return Module(
            path: value["path"]?.stringValue ?? "", base: Address(json: value["base"]) ?? Address(0),
            size: Address(json: value["size"]) ?? Address(0), buildId: value["build_id"]?.stringValue ?? "")
    }

    private static func hang(_ value: CohorlyValue) -> Hang? {
        guard value.objectValue != nil else { return nil }
        return Hang(
            subject: value["subject"]?.stringValue ?? "", kind: value["kind"]?.stringValue ?? "",
            durationMs: value["duration_ms"].flatMap(unsigned) ?? 0,
            thresholdMs: value["threshold_ms"].flatMap(unsigned) ?? 0)
    }

    /// A breadcrumb; fields missing from a salvaged report take neutral values.
    static func breadcrumb(_ value: CohorlyValue) -> Breadcrumb? {
        guard value.objectValue != nil else { return nil }
        var crumb = Breadcrumb(
            timestampMs: value["timestamp_ms"].flatMap(unsigned) ?? 0, category: value["category"]?.stringValue ?? "",
            message: value["message"]?.stringValue ?? "", data: value["data"]?.objectValue ?? [:],
            task: value["task"].flatMap(unsigned))
        crumb.level = value["level"]?.stringValue
        crumb.type = value["type"]?.stringValue
        return crumb
    }
}
