/// The parts of an `$exception` event's properties that ``CapturedException/init(exceptionEvent:)`` reads, each
/// frame reduced to the members it uses: made from a parsed tree, or straight from the bytes
/// (`CapturedException(exceptionEventJSON:)`, no tree of the frames), then read into the crash by one code.
struct ExceptionEventParts {
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
        /// them (events hold thousands of frames: a lookup per member read cost more than the rest).
        init(_ frame: CohorlyValue) {
            guard case .object(let members) = frame else { return }
            var function: CohorlyValue?
            var file: CohorlyValue?
            var line: CohorlyValue?
            var column: CohorlyValue?
            var raw: CohorlyValue?
            for (key, value) in members {
                switch key {
                case "instruction_addr": pc = CapturedException.wireAddress(value)
                case CapturedException.frameKindKey: kind = value.stringValue.map(Frame.Kind.init(wireName:))
                case "in_app": inApp = value == .bool(true)
                case "inline": inlined = value == .bool(true)
                case "image_addr": imageBase = CapturedException.wireAddress(value)?.value
                case "module": module = value.stringValue
                case "function": function = value
                case "filename": file = value
                case "lineno": line = value
                case "colno": column = value
                case "symbol": raw = value
                default: continue
                }
            }
            symbol = CapturedException.symbol(
                function: function, file: file, line: line, column: column, raw: raw, inlined: inlined)
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
        var stack = Stack()
        var tid: CohorlyValue?
        var name: CohorlyValue?
    }

    /// `$exception_list[0]`'s members but its stack trace (nil: no such object).
    var exception: [String: CohorlyValue]?
    /// `$exception_list[0].stacktrace`.
    var exceptionStack = Stack()
    var threads: [WireThread] = []
    /// The `$debug_images` elements.
    var images: [CohorlyValue] = []
    /// Whether `$exception_list` is an array (what makes the event a crash).
    var listed = false
    /// Every other member: `$exception…` ones as scalars, the rest whole (kept as the event's properties).
    var members: [String: CohorlyValue] = [:]
}

extension ExceptionEventParts {
    /// The parts of a parsed properties object.
    init(properties: CohorlyValue) {
        let exception = properties["$exception_list"]?.arrayValue?.first
        listed = properties["$exception_list"]?.arrayValue != nil
        self.exception = exception?.objectValue
        exceptionStack = Stack(exception?["stacktrace"])
        threads = (properties["$exception_threads"]?.arrayValue ?? []).map { other in
            WireThread(
                crashed: other["crashed"] == .bool(true), stack: Stack(other["stacktrace"]), tid: other["thread_id"],
                name: other["name"])
        }
        images = properties["$debug_images"]?.arrayValue ?? []
        members = properties.objectValue ?? [:]
    }
}

extension ExceptionEventParts.Stack {
    /// A parsed `stacktrace` value.
    init(_ stacktrace: CohorlyValue?) {
        frames = (stacktrace?["frames"]?.arrayValue ?? []).map(ExceptionEventParts.WireFrame.init)
        asyncStop = stacktrace?[CapturedException.asyncStopKey]?.stringValue
    }
}
