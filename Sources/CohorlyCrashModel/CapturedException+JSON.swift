/// An exception as JSON, whole (what a queue persists between the launch that made it and the one that sends
/// it): every thread with its frames' kinds, in-app flags and symbols, the async chains, the images, the
/// breadcrumbs and the properties. Frames are written as report format v2 writes them (`{"addr", "kind"}`).
/// The decided reason is kept (``description``), not what it was decided from: read back, ``facts`` holds it as
/// given.
extension CapturedException {
    /// The `format` member of this JSON.
    public static let jsonFormat = "cohorly-exception/1"

    /// The exception as JSON.
    public var jsonValue: CohorlyValue {
        var members: Properties = [
            "format": .string(Self.jsonFormat), "type": .string(description.type), "value": .string(description.value),
            "mechanism": .string(description.mechanism), "source": .string(description.source),
            "level": .string(level), "handled": .bool(handled), "synthetic": .bool(synthetic),
            "mechanism_meta": .object(mechanismMeta), "threads": .array(threads.map(Self.json)),
            "images": .array(images.map(Self.json)), "breadcrumbs": .array(breadcrumbs.map(Self.json)),
            "breadcrumbs_dropped": .int(breadcrumbsDropped), "properties": .object(properties),
            "timestamp_ms": .int(Int(clamping: timestampMs)), "insert_id": .string(insertId),
            "complete": .bool(complete), "has_stack": .bool(hasStack),
        ]
        if let issueName = description.issueName { members["issue_name"] = .string(issueName) }
        if let arch { members["arch"] = .string(arch) }
        if let executable { members["executable"] = .string(executable) }
        members.merge(exceptionListJSON) { _, listed in listed }
        if let listedThreads { members["listed_threads"] = .array(listedThreads.map(Self.json)) }
        if let breadcrumbDifferences {
            members["breadcrumb_differences"] = .array(breadcrumbDifferences.map(\.json))
        }
        return .object(members)
    }

    /// The exception `value` holds; nil when it is not this JSON (another `format`, or no reason).
    public init?(jsonValue value: CohorlyValue) {
        guard value["format"]?.stringValue == Self.jsonFormat, let type = value["type"]?.stringValue,
            let text = value["value"]?.stringValue, let mechanism = value["mechanism"]?.stringValue
        else { return nil }
        let description = CrashDescription(
            type: type, value: text, mechanism: mechanism, issueName: value["issue_name"]?.stringValue,
            source: value["source"]?.stringValue ?? "signal")
        self.init(
            description: description, facts: CrashReason.Facts(given: description),
            level: value["level"]?.stringValue ?? "fatal", handled: value["handled"] == .bool(true))
        synthetic = value["synthetic"] == .bool(true)
        mechanismMeta = value["mechanism_meta"]?.objectValue ?? [:]
        threads = (value["threads"]?.arrayValue ?? []).compactMap(Self.thread)
        images = (value["images"]?.arrayValue ?? []).compactMap(Self.image)
        arch = value["arch"]?.stringValue
        breadcrumbs = (value["breadcrumbs"]?.arrayValue ?? []).compactMap(CrashReport.breadcrumb)
        breadcrumbsDropped = value["breadcrumbs_dropped"]?.intValue ?? 0
        properties = value["properties"]?.objectValue ?? [:]
        timestampMs = value["timestamp_ms"]?.intValue.map(Int64.init) ?? 0
        insertId = value["insert_id"]?.stringValue ?? ""
        executable = value["executable"]?.stringValue
        complete = value["complete"] != .bool(false)
        hasStack = value["has_stack"] != .bool(false)
        exceptionList = Self.exceptionList(json: value)
        listedThreads = value["listed_threads"]?.arrayValue?.map(Self.listedThread)
        breadcrumbDifferences = value["breadcrumb_differences"]?.arrayValue?.map(SentDifference.init(json:))
    }

    /// A listed stack: `{"frames": [{"frame", "kind_sent", "inline", "sent"}…], "sent"}`.
    static func json(_ stack: ListedStack) -> CohorlyValue {
        [
            "frames": .array(
                stack.frames.map { listed in
                    var members: Properties = ["sent": listed.sent.json]
                    if let frame = listed.frame { members["frame"] = json(frame) }
                    if !listed.kindSent { members["kind_sent"] = false }
                    if listed.inlined { members["inline"] = true }
                    return .object(members)
                }),
            "sent": stack.sent.json,
        ]
    }

    static func listedStack(_ value: CohorlyValue) -> ListedStack {
        ListedStack(
            frames: (value["frames"]?.arrayValue ?? []).map { listed in
                ListedFrame(
                    frame: listed["frame"].flatMap(stackFrame), kindSent: listed["kind_sent"] != .bool(false),
                    inlined: listed["inline"] == .bool(true), sent: SentDifference(json: listed["sent"]))
            }, sent: SentDifference(json: value["sent"]))
    }

    private static func json(_ thread: ListedThread) -> CohorlyValue {
        var members: Properties = ["sent": thread.sent.json]
        members["thread_id"] = thread.threadId
        members["name"] = thread.name
        members["stack"] = thread.stack.map(json)
        return .object(members)
    }

    private static func listedThread(_ value: CohorlyValue) -> ListedThread {
        ListedThread(
            threadId: value["thread_id"], name: value["name"], stack: value["stack"].map(listedStack),
            sent: SentDifference(json: value["sent"]))
    }

    private static func json(_ thread: Thread) -> CohorlyValue {
        var members: Properties = [
            "crashed": .bool(thread.crashed), "truncated": .bool(thread.truncated),
            "frames": .array(thread.frames.map(json)),
        ]
        if let tid = thread.tid { members["tid"] = .int(Int(tid)) }
        if let name = thread.name { members["name"] = .string(name) }
        if thread.catchSite { members["catch_site"] = true }
        if let chain = thread.async {
            members["async"] = [
                "anchor": .int(chain.anchor), "stop": .string(chain.stop.rawValue),
                "frames": .array(chain.frames.map(json)),
            ]
        }
        return .object(members)
    }

    private static func thread(_ value: CohorlyValue) -> Thread? {
        guard value.objectValue != nil else { return nil }
        let frames = (value["frames"]?.arrayValue ?? []).compactMap(stackFrame)
        var async: AsyncStack?
        if let chain = value["async"], let anchor = chain["anchor"]?.intValue, anchor >= 0, anchor < frames.count {
            async = AsyncStack(
                anchor: anchor, stop: AsyncChain.Stop(wireName: chain["stop"]?.stringValue ?? ""),
                frames: (chain["frames"]?.arrayValue ?? []).compactMap(stackFrame))
        }
        return Thread(
            tid: value["tid"]?.intValue.flatMap { Int32(exactly: $0) }, name: value["name"]?.stringValue,
            crashed: value["crashed"] == .bool(true), truncated: value["truncated"] == .bool(true), frames: frames,
            async: async, catchSite: value["catch_site"] == .bool(true))
    }

    private static func json(_ frame: StackFrame) -> CohorlyValue {
        var members: Properties = [
            "addr": frame.frame.address.json, "kind": .string(frame.frame.kind.wireName), "in_app": .bool(frame.inApp),
        ]
        if !frame.symbols.isEmpty { members["symbols"] = .array(frame.symbols.map(json)) }
        return .object(members)
    }

    private static func stackFrame(_ value: CohorlyValue) -> StackFrame? {
        guard let address = Address(json: value["addr"]) else { return nil }
        let kind = Frame.Kind(wireName: value["kind"]?.stringValue ?? "")
        return StackFrame(
            Frame(address, kind: kind), inApp: value["in_app"] == .bool(true),
            symbols: (value["symbols"]?.arrayValue ?? []).compactMap(symbol))
    }

    private static func json(_ symbol: FrameSymbol) -> CohorlyValue {
        var members: Properties = [
            "line": .int(symbol.line), "column": .int(symbol.column), "inlined": .bool(symbol.inlined),
        ]
        if let function = symbol.function { members["function"] = .string(function) }
        if let raw = symbol.rawFunction { members["raw_function"] = .string(raw) }
        if let file = symbol.file { members["file"] = .string(file) }
        if let offset = symbol.symbolOffset { members["symbol_offset"] = Address(offset).json }
        if let short = symbol.shortFunction { members["short_function"] = .string(short) }
        if let language = symbol.language { members["language"] = .string(language) }
        return .object(members)
    }

    private static func symbol(_ value: CohorlyValue) -> FrameSymbol? {
        guard value.objectValue != nil else { return nil }
        return FrameSymbol(
            function: value["function"]?.stringValue, rawFunction: value["raw_function"]?.stringValue,
            file: value["file"]?.stringValue, line: value["line"]?.intValue ?? 0,
            column: value["column"]?.intValue ?? 0, inlined: value["inlined"] == .bool(true),
            symbolOffset: Address(json: value["symbol_offset"])?.value,
            shortFunction: value["short_function"]?.stringValue, language: value["language"]?.stringValue)
    }

    private static func json(_ image: Image) -> CohorlyValue {
        [
            "path": .string(image.path), "base": Address(image.base).json, "size": Address(image.size).json,
            "build_id": .string(image.buildId),
        ]
    }

    private static func image(_ value: CohorlyValue) -> Image? {
        guard let path = value["path"]?.stringValue, let base = Address(json: value["base"]) else { return nil }
        return Image(
            path: path, base: base.value, size: Address(json: value["size"])?.value ?? 0,
            buildId: value["build_id"]?.stringValue ?? "")
    }

    private static func json(_ crumb: Breadcrumb) -> CohorlyValue {
        var value: Properties = [
            "timestamp_ms": .int(Int(clamping: crumb.timestampMs)), "category": .string(crumb.category),
            "message": .string(crumb.message), "data": .object(crumb.data),
        ]
        if let task = crumb.task { value["task"] = .int(Int(clamping: task)) }
        if let level = crumb.level { value["level"] = .string(level) }
        if let type = crumb.type { value["type"] = .string(type) }
        return .object(value)
    }
}
