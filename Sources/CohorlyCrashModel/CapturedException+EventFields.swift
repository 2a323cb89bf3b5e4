/// The members of an `$exception` event's properties that ``CapturedException/init(exceptionEvent:)`` reads, each
/// frame reduced to the members it uses: made from a parsed tree, or straight from the bytes
/// (`CapturedException(exceptionEventJSON:)`, no tree of the frames), then read into the crash by one code.
struct ExceptionEventFields {
    /// A member of a `stacktrace.frames` element that the readers use, told from its key by the key's length
    /// first: a frame has ten members, and comparing each key with every name in turn cost more than the rest
    /// of reading the frame (events hold thousands of frames; the collector groups every one it stores).
    enum FrameMember {
        case instructionAddr, kind, inApp, inline, imageAddr, module, function, filename, lineno, colno, symbol
        case rawFunction, lang

        /// The member `key` names; nil for one no reader uses.
        init?(_ key: String) {
            switch key.utf8.count {
            case 4 where key == "lang": self = .lang
            case 5 where key == "colno": self = .colno
            case 6:
                switch key {
                case "in_app": self = .inApp
                case "inline": self = .inline
                case "module": self = .module
                case "lineno": self = .lineno
                case "symbol": self = .symbol
                default: return nil
                }
            case 8:
                switch key {
                case "function": self = .function
                case "filename": self = .filename
                default: return nil
                }
            case 10 where key == "image_addr": self = .imageAddr
            case 12 where key == CapturedException.rawFunctionKey: self = .rawFunction
            case 16 where key == "instruction_addr": self = .instructionAddr
            case CapturedException.frameKindKey.utf8.count where key == CapturedException.frameKindKey: self = .kind
            default: return nil
            }
        }
    }

    /// One `stacktrace.frames` element.
    struct WireFrame {
        var inlined = false
        var pc: Address?
        var kind: Frame.Kind?
        var inApp = false
        var symbol: FrameSymbol?
        var imageBase: UInt64?
        var module: String?

        /// A frame from its members (nested containers may be emptied: only scalars are read), in one pass over
        /// them (events hold thousands of frames: a lookup per member read cost more than the rest, each hashes
        /// its key). `allSymbols` false (grouping: ``CapturedException/groupingView(exceptionEvent:)``) reads
        /// the symbol only where it can name an in-app frame: on an in-app frame or an inlined call.
        init(_ frame: CohorlyValue, allSymbols: Bool = true) {
            guard case .object(let members) = frame else { return }
            var function: CohorlyValue?
            var file: CohorlyValue?
            var line: CohorlyValue?
            var column: CohorlyValue?
            var raw: CohorlyValue?
            var full: CohorlyValue?
            var language: CohorlyValue?
            for (key, value) in members {
                switch FrameMember(key) {
                case .instructionAddr: pc = CapturedException.wireAddress(value)
                case .kind: kind = value.stringValue.map(Frame.Kind.init(wireName:))
                case .inApp: inApp = value == .bool(true)
                case .inline: inlined = value == .bool(true)
                case .imageAddr: imageBase = CapturedException.wireAddress(value)?.value
                case .module: module = value.stringValue
                case .function: function = value
                case .filename: file = value
                case .lineno: line = value
                case .colno: column = value
                case .symbol: raw = value
                case .rawFunction: full = value
                case .lang: language = value
                case nil: continue
                }
            }
            guard allSymbols || inApp || inlined else { return }
            symbol = CapturedException.symbol(
                function: function, fullFunction: full, file: file, line: line, column: column, raw: raw,
                inlined: inlined, language: language)
        }
    }

    /// A `stacktrace`: its frames, oldest first, and why its async walk stopped.
    struct Stack {
        var frames: [WireFrame] = []
        var asyncStop: String?
    }

    /// An `$exception_threads` element.
    struct WireThread {
        var crashed = false
        var catchSite = false
        var stack = Stack()
        var tid: CohorlyValue?
        var name: CohorlyValue?
    }

    /// The first exception's members but its stack trace (nil: no such object).
    var exception: [String: CohorlyValue]?
    /// The first exception's `stacktrace`.
    var exceptionStack = Stack()
    var threads: [WireThread] = []
    /// The `$debug_images` elements.
    var images: [CohorlyValue] = []
    /// Whether ``CapturedException/exceptionListProperty`` is an array (what makes the event a crash).
    var listed = false
    /// Each entry of that array as it arrived (``CapturedException/ListedException``).
    var listedExceptions: [CapturedException.ListedException] = []
    /// Every other member, whole (those the model has no field for kept as the event's properties).
    var members: [String: CohorlyValue] = [:]
}

extension ExceptionEventFields {
    /// The fields of a parsed properties object.
    init(properties: CohorlyValue) {
        let list = properties[CapturedException.exceptionListProperty]?.arrayValue
        let exception = list?.first
        listed = list != nil
        listedExceptions = list?.map(CapturedException.ListedException.init(entry:)) ?? []
        self.exception = exception?.objectValue
        exceptionStack = Stack(exception?["stacktrace"])
        threads = (properties[CapturedException.threadsProperty]?.arrayValue ?? []).map { other in
            WireThread(
                crashed: other["crashed"] == .bool(true), catchSite: other["catch_site"] == .bool(true),
                stack: Stack(other["stacktrace"]), tid: other["thread_id"], name: other["name"])
        }
        images = properties["$debug_images"]?.arrayValue ?? []
        members = properties.objectValue ?? [:]
    }
}

extension ExceptionEventFields.Stack {
    /// A parsed `stacktrace` value.
    init(_ stacktrace: CohorlyValue?) {
        frames = (stacktrace?["frames"]?.arrayValue ?? []).map { ExceptionEventFields.WireFrame($0) }
        asyncStop = stacktrace?[CapturedException.asyncStopKey]?.stringValue
    }
}
