extension CapturedException {
    /// The per-frame member of an `$exception` stack frame that carries the frame's kind (`pc`,
    /// `return_address`, `async_resume`), so no server guesses which address to look up one byte back.
    /// PostHog's cymbal drops members it does not know, so the frame stays valid there.
    public static let frameKindKey = "instruction_addr_kind"
    /// The `stacktrace` member telling why the async walk of that thread stopped (present with async frames).
    public static let asyncStopKey = "async_stop"

    /// The crash in an `$exception` event's properties: the one reading of the event shape, used by the collector
    /// (`cohorly crashes show`) and by `cohorly symbolicate EVENT.json`.
    ///
    /// Reads PostHog's native shape (docs/posthog.md "What goes on the wire"): the first of ``exceptionListProperty`` with `type`,
    /// `value`,
    /// `mechanism` and `stacktrace.frames` oldest first (`instruction_addr`, `image_addr`, `module`, the frame's
    /// kind under ``frameKindKey``; `inline: true` frames repeat their physical frame's address and are folded
    /// under it; the `function`, `filename`, `lineno` and `colno` the device resolved are kept as symbols, with
    /// the mangled `symbol` as the raw function),
    /// `$exception_threads`, and `$debug_images` (`code_file`, `code_id`, `image_addr`, `image_size`). Frames of
    /// kind `async_resume` are the thread's async callers, after the physical frame they continue from. A frame
    /// without a kind (events of older SDKs) follows the old positional rule: the innermost exact, the others
    /// return addresses. A frame whose image is not among `$debug_images` still gets an image from its own
    /// `module` and `image_addr`. Events come from the network or from files: nothing in them can trap.
    public init(exceptionEvent properties: CohorlyValue) {
        self.init(fields: ExceptionEventFields(properties: properties))
    }

    /// The crash in an `$exception` event's properties as ``init(exceptionEvent:)`` reads it, with the exception
    /// list and `$exception_threads` also held as they arrived, entry for entry and frame for frame
    /// (``ListedException/sent``, ``listedThreads``), so ``eventProperties`` renders them back as they arrived:
    /// what a collector stores of an event it received. Each is held only when the model's own rendering of it
    /// differs from what arrived: an event a device made from the model renders back as it is, and holding its
    /// stacks a second time would about triple the model's JSON.
    public init(receivedEvent properties: CohorlyValue) {
        self.init(exceptionEvent: properties)
        let list = properties[Self.exceptionListProperty]
        let threads = properties[Self.threadsProperty]
        guard list != nil || threads != nil else { return }
        let rendered = eventProperties
        if let entries = list?.arrayValue, rendered[Self.exceptionListProperty] != list {
            exceptionList = .listed(entries.map(ListedException.init(whole:)))
        }
        if threads != nil, rendered[Self.threadsProperty] != threads {
            listedThreads = ListedThread.list(threads)
        }
    }

    /// The crash a wire of another shape listed (Sentry's events, decoded at their edge): its exceptions, the one
    /// raised first, and other threads as the model's listed entries, the debug images (`code_file`, `code_id`,
    /// `image_addr`, `image_size`, `arch`) and the event's other properties (level, subject thread's name,
    /// breadcrumbs, fingerprint, context…): read as ``init(receivedEvent:)`` reads the event these render
    /// (``eventProperties``), without that event being made.
    package init(
        listedExceptions: [ListedException], listedThreads: [ListedThread]?, images: [CohorlyValue],
        properties: Properties
    ) {
        var fields = ExceptionEventFields()
        fields.listed = true
        fields.listedExceptions = listedExceptions
        if let first = listedExceptions.first {
            var exception = first.sent?.kept ?? [:]
            exception["type"] = first.type
            exception["value"] = first.value
            exception["mechanism"] = first.mechanism
            exception["module"] = first.module
            exception["thread_id"] = first.threadId
            exception["stacktrace"] = nil
            fields.exception = exception
            fields.exceptionStack = ExceptionEventFields.Stack(first.stack?.value)
        }
        fields.threads = (listedThreads ?? []).map { listed in
            let entry = listed.value
            return ExceptionEventFields.WireThread(
                crashed: entry["crashed"] == .bool(true), catchSite: entry["catch_site"] == .bool(true),
                stack: ExceptionEventFields.Stack(entry["stacktrace"]), tid: listed.threadId, name: listed.name)
        }
        fields.images = images
        fields.members = properties
        self.init(fields: fields)
        exceptionList = .listed(listedExceptions)
        self.listedThreads = listedThreads
    }

    /// The crash in an event's fields (from a parsed tree or straight from the bytes).
    init(fields: ExceptionEventFields) {
        let properties = CohorlyValue.object(fields.members)
        let exception = fields.exception.map(CohorlyValue.object)
        let mechanism = exception?["mechanism"]
        let facts = Self.facts(exception, properties: properties)
        self.init(
            description: CrashReason.describe(facts), facts: facts,
            level: properties[Self.levelProperty]?.stringValue ?? "fatal", handled: mechanism?["handled"] == .bool(true)
        )
        synthetic = mechanism?["synthetic"] == .bool(true)
        mechanismMeta = mechanism?["meta"]?.objectValue ?? [:]
        threads = [
            Self.thread(
                fields.exceptionStack, tid: exception?["thread_id"], name: properties[Self.threadNameProperty],
                crashed: true)
        ]
        // A producer may list the crashed thread again among all threads.
        for other in fields.threads where !other.crashed {
            var thread = Self.thread(other.stack, tid: other.tid, name: other.name, crashed: false)
            thread.catchSite = other.catchSite
            threads.append(thread)
        }
        images = Self.images(
            fields.images, frames: fields.exceptionStack.frames + fields.threads.flatMap(\.stack.frames))
        arch = fields.images.first?["arch"]?.stringValue
        timestampMs = properties["time"]?.intValue.map(Int64.init) ?? 0
        insertId = properties["$insert_id"]?.stringValue ?? ""
        executable = properties["$exception_executable"]?.stringValue
        if case .bool(false)? = properties["$exception_report_complete"] { complete = false }
        exceptionList = fields.listed ? .listed(fields.listedExceptions) : .missing
        // Every member no field holds stays a property — the fingerprint as sent, the crash-time `$exception_…`
        // facts (pid, hang, abnormal exit…), breadcrumbs the model cannot say exactly — so the event read back
        // renders as it arrived.
        self.properties = fields.members.filter { !Self.fieldProperties.contains($0.key) }
        if let sent = fields.members[Self.breadcrumbsProperty], let read = Self.breadcrumbs(sent, crashingTask: task) {
            breadcrumbs = read.crumbs
            breadcrumbDifferences = read.differences
            self.properties[Self.breadcrumbsProperty] = nil
        }
    }

    /// The breadcrumbs of an event's `$exception_breadcrumbs`, each with its `level` and `type`, and how each
    /// entry differs from the model's rendering of it (``breadcrumbsValue(_:crashingTask:inData:)``, in its
    /// order: the crashing task's first; nil when none differs): a member the model has no field for, a
    /// `category`, `message`, `data`, `type` or `level` missing or of another type, a timestamp in another form.
    /// Nil unless the list is an array of objects, each with an RFC 3339 `timestamp` (it then stays a property
    /// as it arrived).
    static func breadcrumbs(_ sent: CohorlyValue, crashingTask: UInt64?) -> (
        crumbs: [Breadcrumb], differences: [SentDifference]?
    )? {
        guard let list = sent.arrayValue, !list.isEmpty else { return nil }
        var crumbs: [Breadcrumb] = []
        crumbs.reserveCapacity(list.count)
        for entry in list {
            guard entry.objectValue != nil, let time = entry["timestamp"]?.stringValue,
                let ms = RFC3339.milliseconds(time), let timestampMs = UInt64(exactly: ms)
            else { return nil }
            var crumb = Breadcrumb(
                timestampMs: timestampMs, category: entry["category"]?.stringValue ?? "",
                message: entry["message"]?.stringValue ?? "", data: entry["data"]?.objectValue ?? [:],
                task: entry["task"]?.intValue.flatMap { UInt64(exactly: $0) })
            let level = entry["level"]?.stringValue
            let type = entry["type"]?.stringValue
            crumb.level = level == "info" ? nil : level
            crumb.type = type == "default" ? nil : type
            crumbs.append(crumb)
        }
        guard
            let rendered = breadcrumbsValue(taskFirst(crumbs, task: crashingTask), crashingTask: crashingTask)
                .arrayValue, rendered.count == list.count
        else { return nil }
        let differences = zip(rendered, list).map { rendered, sent in
            SentDifference(rendered: rendered.objectValue ?? [:], sent: sent.objectValue ?? [:])
        }
        return (crumbs, differences.allSatisfy(\.isEmpty) ? nil : differences)
    }

    /// The event's members the reader holds in fields of the model (rendered back from them by
    /// ``eventProperties``), left out of ``properties``.
    static let fieldProperties: Set<String> = [
        exceptionListProperty, threadsProperty, "$debug_images", levelProperty, "$exception_type",
        "$exception_message", threadNameProperty, "$exception_executable", "$exception_report_complete",
    ]

    /// What the reason is decided from: the first exception's type, value and mechanism (its signal), and
    /// `$issue_name` of `properties`.
    static func facts(_ exception: CohorlyValue?, properties: CohorlyValue) -> CrashReason.Facts {
        let type = exception?["type"]?.stringValue ?? ""
        let value = exception?["value"]?.stringValue ?? ""
        let mechanism = exception?["mechanism"]
        let mechanismType = mechanism?["type"]?.stringValue ?? "signal"
        let signal = mechanism?["meta"]?["signal"]
        var facts = CrashReason.Facts()
        if signal != nil {
            facts.signal = CrashReport.Signal(
                number: signal?["number"]?.intValue.flatMap { Int32(exactly: $0) } ?? 0,
                name: signal?["name"]?.stringValue ?? "",
                code: signal?["code"]?.intValue.flatMap { Int32(exactly: $0) } ?? 0,
                address: Self.wireAddress(signal?["address"]) ?? Address(0))
        }
        switch mechanismType {
        case "cxx", "cxx_exception": facts.cxx = CrashReport.CxxException(type: type, what: value)
        default:
            let source =
                mechanismType == "swift" || mechanismType == "swift_fatal"
                ? (type.hasPrefix("Swift runtime failure") ? "dwarf" : "message") : "signal"
            facts.given = CrashDescription(
                type: type, value: value, mechanism: mechanismType,
                issueName: properties["$issue_name"]?.stringValue
                    ?? (value.isEmpty || source == "dwarf" ? type : "\(type): \(value)"),
                source: source)
        }
        return facts
    }

    /// A thread from a stacktrace: frames oldest first → physical frames innermost first, each with the symbols
    /// the device resolved (its inlined calls innermost first, then itself), and the async frames after the
    /// physical frame they follow.
    private static func thread(
        _ stack: ExceptionEventFields.Stack, tid: CohorlyValue?, name: CohorlyValue?, crashed: Bool
    ) -> Thread {
        var ordered: [(frame: StackFrame, hasKind: Bool)] = []
        for frame in stack.frames {
            if !frame.inlined {
                guard let pc = frame.pc else { continue }
                ordered.append(
                    (StackFrame(Frame(pc, kind: frame.kind ?? .returnAddress), inApp: frame.inApp), frame.kind != nil))
            }
            guard !ordered.isEmpty, let symbol = frame.symbol else { continue }
            ordered[ordered.count - 1].frame.symbols.insert(symbol, at: 0)
        }
        ordered.reverse()
        var physical: [StackFrame] = []
        var asyncFrames: [StackFrame] = []
        var anchor: Int?
        for (index, entry) in ordered.enumerated() {
            var frame = entry.frame
            // Events without kinds: the innermost frame exact, the others return addresses.
            if !entry.hasKind && index == 0 { frame.frame.kind = .pc }
            if frame.frame.kind == .asyncResume && !physical.isEmpty {
                if anchor == nil { anchor = physical.count - 1 }
                asyncFrames.append(frame)
            } else {
                physical.append(frame)
            }
        }
        let async = anchor.map { anchor in
            AsyncStack(
                anchor: anchor, stop: AsyncChain.Stop(wireName: stack.asyncStop ?? ""),
                frames: asyncFrames)
        }
        return Thread(
            tid: tid?.intValue.flatMap { Int32(exactly: $0) }, name: name?.stringValue, crashed: crashed,
            frames: physical, async: async)
    }

    /// What the device resolved for one frame (nil when it resolved nothing), from the frame's `function`,
    /// `raw_function` (the full name where `function` is the short one: the symbol's function, the short one its
    /// ``FrameSymbol/shortFunction``), `filename`, `lineno`, `colno` and `symbol` members. Numbers from the
    /// network: a line or column outside 0…2³¹ is read as unknown.
    static func symbol(
        function given: CohorlyValue?, fullFunction: CohorlyValue? = nil, file: CohorlyValue?, line: CohorlyValue?,
        column: CohorlyValue?, raw: CohorlyValue?, inlined: Bool, language: CohorlyValue? = nil
    ) -> FrameSymbol? {
        let full = fullFunction?.stringValue
        let function = full ?? given?.stringValue
        let file = file?.stringValue
        guard function != nil || file != nil else { return nil }
        let line = line?.intValue.flatMap { (0...Int(Int32.max)).contains($0) ? $0 : nil } ?? 0
        let column = column?.intValue.flatMap { (0...Int(Int32.max)).contains($0) ? $0 : nil } ?? 0
        var symbol = FrameSymbol(
            function: function, rawFunction: raw?.stringValue, file: file, line: line, column: column,
            inlined: inlined, shortFunction: full == nil ? nil : given?.stringValue)
        // A `lang` the name and file do not tell (a C++ frame's: its `_Z…` name is not sent) is kept.
        if let named = language?.stringValue, named != LaidOutFrame.language(of: symbol) { symbol.language = named }
        return symbol
    }

    /// A `0x…` hex string (PostHog's form of every address); nil for anything else.
    static func wireAddress(_ value: CohorlyValue?) -> Address? {
        value?.stringValue.flatMap(Address.init(hex:))
    }

    /// `$debug_images`, plus an image for each (`module`, `image_addr`) of a frame that none of them covers,
    /// sized to reach the frame's highest address.
    static func images(_ list: [CohorlyValue], frames: [ExceptionEventFields.WireFrame]) -> [Image] {
        var images = list.compactMap { image -> Image? in
            guard let path = image["code_file"]?.stringValue, let base = wireAddress(image["image_addr"]) else {
                return nil
            }
            // A negative or absurd size is read as unknown, never trapped on.
            let size =
                image["image_size"]?.intValue.flatMap { UInt64(exactly: $0) } ?? wireAddress(image["image_size"])?.value
                ?? 0
            return Image(path: path, base: base.value, size: size, buildId: image["code_id"]?.stringValue ?? "")
        }
        var extra: [UInt64: (module: String, end: UInt64)] = [:]
        for frame in frames {
            guard let base = frame.imageBase, let pc = frame.pc?.value, pc >= base,
                !images.contains(where: { $0.base <= pc && pc - $0.base < $0.size })
            else { continue }
            let module = frame.module ?? extra[base]?.module ?? "???"
            extra[base] = (module, max(extra[base]?.end ?? 0, pc))
        }
        for (base, image) in extra.sorted(by: { $0.key < $1.key }) {
            let size = min(image.end - base, UInt64.max - 1) + 1
            if let known = images.firstIndex(where: { $0.base == base }) {
                images[known].size = max(images[known].size, size)
            } else {
                images.append(Image(path: image.module, base: base, size: size, buildId: ""))
            }
        }
        return images
    }
}
