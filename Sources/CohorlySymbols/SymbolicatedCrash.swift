import CohorlyCrashModel

/// A symbolicated crash: the reason first, then every thread's frames with function, file, line and the
/// inline chain. Codable, so a collector can serve it and a CLI can print it.
public struct SymbolicatedCrash: Codable, Sendable, Equatable {
    /// The crash reason, most specific first: the Swift message, the C++ exception, a `Swift runtime failure`
    /// inline frame at the crash site, then the signal.
    public var reason: String
    /// Where ``reason`` came from: `message`, `cxx_exception`, `dwarf`, `signal`.
    public var reasonSource: String
    /// Signal name, number, code and address.
    public var signal: Signal?
    /// How the crash was caught.
    public var mechanism: String?
    /// Whether the app handled it (a captured error: true; a crash report: false); nil from an older collector.
    public var handled: Bool? = nil
    /// The crashed executable.
    public var executable: String?
    /// False for a salvaged report.
    public var complete: Bool
    /// The threads, crashed first.
    public var threads: [Thread]
    /// Images with frames whose debug file was not found (they stay raw).
    public var unsymbolicatedModules: [MissingModule]
    /// Images with frames named from their symbol table only (no debug file with DWARF was found: no files,
    /// lines or inlined calls). Nil when the answer came from a symbolicator that did not say.
    public var modulesWithoutDebugInfo: [MissingModule]?

    /// The signal.
    public struct Signal: Codable, Sendable, Equatable {
        /// e.g. `SIGSEGV`.
        public var name: String?
        /// e.g. 11.
        public var number: Int?
        /// `si_code`.
        public var code: Int?
        /// Fault address, hex.
        public var address: String?
    }

    /// One thread.
    public struct Thread: Codable, Sendable, Equatable {
        /// Kernel thread id.
        public var tid: Int?
        /// Name.
        public var name: String?
        /// Whether it crashed.
        public var crashed: Bool
        /// Whether frames were cut.
        public var truncated: Bool
        /// Physical frames, innermost first.
        public var frames: [Frame]
        /// The awaiting callers (async resume points), innermost first, when the crash had them; their
        /// ``Frame/index`` counts within this list.
        public var asyncFrames: [Frame]?
        /// Index into ``frames`` of the physical frame the async callers continue from.
        public var asyncAnchor: Int?
        /// Why the async walk stopped (`task_root`, `fault`, `validation`, `loop`, `limit`).
        public var asyncStop: String?

        enum CodingKeys: String, CodingKey {
            case tid, name, crashed, truncated, frames
            case asyncFrames = "async_frames"
            case asyncAnchor = "async_anchor"
            case asyncStop = "async_stop"
        }
    }

    /// One physical frame and its source-level frames.
    public struct Frame: Codable, Sendable, Equatable {
        /// Position in the thread (0 = innermost).
        public var index: Int
        /// Absolute address, hex.
        public var instructionAddr: String
        /// The image's path, when the address is inside a known image.
        public var module: String?
        /// The image's load address, hex.
        public var imageAddr: String?
        /// The file-relative address looked up (after the return-address adjustment), hex.
        public var fileAddress: String?
        /// `pc`, `return_address` or `async_resume` (nil from a symbolicator that did not say).
        public var kind: String?
        /// Source-level frames, innermost (inlined) first, the physical function last; empty when unknown.
        public var symbols: [Symbol]
        /// Whether it is the app's code (``AppCode``, as the event's `in_app` says); nil from a symbolicator
        /// that did not say.
        public var inApp: Bool? = nil

        enum CodingKeys: String, CodingKey {
            case index, module, symbols, kind
            case inApp = "in_app"
            case instructionAddr = "instruction_addr"
            case imageAddr = "image_addr"
            case fileAddress = "file_address"
        }
    }

    /// A function and where in it (the crash model's ``FrameSymbol``).
    public typealias Symbol = FrameSymbol

    /// An image that stayed raw.
    public struct MissingModule: Codable, Sendable, Equatable {
        /// Its path.
        public var path: String
        /// Its build id (hex), when known.
        public var buildId: String?
        /// Why (no debug file found, unreadable…).
        public var error: String

        enum CodingKeys: String, CodingKey {
            case path, error
            case buildId = "build_id"
        }
    }

    enum CodingKeys: String, CodingKey {
        case reason, signal, mechanism, handled, executable, complete, threads
        case reasonSource = "reason_source"
        case unsymbolicatedModules = "unsymbolicated_modules"
        case modulesWithoutDebugInfo = "modules_without_debug_info"
    }
}
