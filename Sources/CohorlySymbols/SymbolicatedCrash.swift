import CohorlyCrashModel

/// A symbolicated crash: the crash model's ``CapturedException`` with every frame's symbols (function, file,
/// line, the inline chain) and lookup (``FrameLookup``: its image, the file address) filled in and its threads
/// crashed first, plus what symbolication decided about the whole crash: the reason (decided again with the crash
/// site found here) and the modules left raw. Codable in the JSON `cohorly symbolicate --json` prints and the
/// collector serves (``init(from:)``); printed by ``text(header:options:)``.
public struct SymbolicatedCrash: Sendable, Equatable {
    /// The crash, its threads crashed first, each frame with the symbols found here and its ``FrameLookup``.
    public var exception: CapturedException
    /// The crash reason, most specific first: the Swift message, the C++ exception, a `Swift runtime failure`
    /// inline frame at the crash site, then the signal.
    public var reason: String
    /// Where ``reason`` came from: `message`, `cxx_exception`, `dwarf`, `signal`.
    public var reasonSource: String
    /// How the crash was caught.
    public var mechanism: String?
    /// Images with frames whose debug file was not found (they stay raw).
    public var unsymbolicatedModules: [MissingModule]
    /// Images with frames named from their symbol table only (no debug file with DWARF was found: no files,
    /// lines or inlined calls). Nil when the answer came from a symbolicator that did not say.
    public var modulesWithoutDebugInfo: [MissingModule]?

    /// A symbolicated crash.
    public init(
        exception: CapturedException, reason: String, reasonSource: String, mechanism: String?,
        unsymbolicatedModules: [MissingModule], modulesWithoutDebugInfo: [MissingModule]?
    ) {
        self.exception = exception
        self.reason = reason
        self.reasonSource = reasonSource
        self.mechanism = mechanism
        self.unsymbolicatedModules = unsymbolicatedModules
        self.modulesWithoutDebugInfo = modulesWithoutDebugInfo
    }

    /// The threads, crashed first (the exception's).
    public var threads: [CapturedException.Thread] {
        get { exception.threads }
        set { exception.threads = newValue }
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
}
