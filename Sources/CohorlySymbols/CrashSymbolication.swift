/// A crash to symbolicate, whatever it came from (a report file, a stored `$exception` event).
public struct CrashInput: Sendable {
    /// The Swift fatal-error message, when the runtime left one.
    public var message: String?
    /// The uncaught C++ exception type and `what()`, when that is how it ended.
    public var cxxType: String?
    /// See ``cxxType``.
    public var cxxWhat: String?
    /// Signal name (`SIGILL`…), number, `si_code` and fault address (hex), when known.
    public var signalName: String?
    /// See ``signalName``.
    public var signalNumber: Int?
    /// See ``signalName``.
    public var signalCode: Int?
    /// See ``signalName``.
    public var faultAddress: String?
    /// A description of the signal made when the crash was caught (e.g. `SIGSEGV: Stack overflow at 0x…`),
    /// used as the reason when nothing more specific is known.
    public var signalDescription: String?
    /// `signal`, `swift_fatal`, `cxx_terminate`, or nil.
    public var mechanism: String?
    /// The crashed executable's path.
    public var executable: String?
    /// False when the crash came from a salvaged, torn report.
    public var complete: Bool
    /// The threads, the crashed one flagged; frames innermost first, frame 0 exact, others return addresses.
    public var threads: [Thread]
    /// The loaded images.
    public var images: [LoadedImage]

    /// One thread of the input.
    public struct Thread: Sendable {
        /// Kernel thread id.
        public var tid: Int?
        /// Thread name.
        public var name: String?
        /// Whether it crashed.
        public var crashed: Bool
        /// Whether frames were cut.
        public var truncated: Bool
        /// Absolute addresses, innermost first.
        public var addresses: [UInt64]
        /// Per address (same order), the frames the crashed device already resolved (innermost first, the
        /// physical function last): shown where no debug file here resolves the address. Empty: none.
        public var clientSymbols: [[SymbolicatedCrash.Symbol]]

        /// A thread.
        public init(
            tid: Int?, name: String?, crashed: Bool, truncated: Bool, addresses: [UInt64],
            clientSymbols: [[SymbolicatedCrash.Symbol]] = []
        ) {
            self.tid = tid
            self.name = name
            self.crashed = crashed
            self.truncated = truncated
            self.addresses = addresses
            self.clientSymbols = clientSymbols
        }
    }

    /// An input; everything but threads and images defaults to unknown.
    public init(threads: [Thread], images: [LoadedImage]) {
        self.threads = threads
        self.images = images
        self.complete = true
    }
}

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
        /// Frames, innermost first.
        public var frames: [Frame]
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
        /// Source-level frames, innermost (inlined) first, the physical function last; empty when unknown.
        public var symbols: [Symbol]

        enum CodingKeys: String, CodingKey {
            case index, module, symbols
            case instructionAddr = "instruction_addr"
            case imageAddr = "image_addr"
            case fileAddress = "file_address"
        }
    }

    /// A function and where in it.
    public struct Symbol: Codable, Sendable, Equatable {
        /// Demangled name.
        public var function: String?
        /// Name as stored in the file.
        public var rawFunction: String?
        /// Source file.
        public var file: String?
        /// Line (0 unknown).
        public var line: Int
        /// Column (0 unknown).
        public var column: Int
        /// Inlined into the next symbol.
        public var inlined: Bool
        /// Offset from the symbol's start (symbol-table names only).
        public var symbolOffset: UInt64?

        /// A symbol.
        public init(
            function: String?, rawFunction: String? = nil, file: String?, line: Int, column: Int, inlined: Bool,
            symbolOffset: UInt64? = nil
        ) {
            self.function = function
            self.rawFunction = rawFunction
            self.file = file
            self.line = line
            self.column = column
            self.inlined = inlined
            self.symbolOffset = symbolOffset
        }

        enum CodingKeys: String, CodingKey {
            case function, file, line, column, inlined
            case rawFunction = "raw_function"
            case symbolOffset = "symbol_offset"
        }
    }

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
        case reason, signal, mechanism, executable, complete, threads
        case reasonSource = "reason_source"
        case unsymbolicatedModules = "unsymbolicated_modules"
        case modulesWithoutDebugInfo = "modules_without_debug_info"
    }
}

/// Turns a ``CrashInput`` into a ``SymbolicatedCrash`` with one ``ImageSymbolicator`` (each module's index
/// is built once and reused for every address).
public enum CrashSymbolicator {
    /// Symbolicates every thread of `input`, finding debug files with `locator`. Where nothing here resolves an
    /// address, the thread's client symbols (what the crashed device resolved) stand.
    public static func symbolicate(_ input: CrashInput, locator: DebugFileLocator) -> SymbolicatedCrash {
        let symbolicator = ImageSymbolicator(images: input.images, locator: locator)
        let ordered = input.threads.filter(\.crashed) + input.threads.filter { !$0.crashed }
        let threads = ordered.map { thread in
            SymbolicatedCrash.Thread(
                tid: thread.tid, name: thread.name, crashed: thread.crashed, truncated: thread.truncated,
                frames: thread.addresses.enumerated().map { index, address in
                    var frame = frame(index: index, address: address, symbolicator)
                    if frame.symbols.isEmpty, index < thread.clientSymbols.count {
                        frame.symbols = thread.clientSymbols[index]
                    }
                    return frame
                })
        }
        let (reason, source) = reason(input, crashedFrames: threads.first(where: \.crashed)?.frames ?? [])
        let missing = symbolicator.failures.map { failure in
            SymbolicatedCrash.MissingModule(
                path: failure.image.path, buildId: failure.image.buildId.map(DebugId.codeId),
                error: failure.error.description)
        }
        let withoutDebugInfo = symbolicator.modulesWithoutDebugInfo.map { image in
            SymbolicatedCrash.MissingModule(
                path: image.path, buildId: image.buildId.map(DebugId.codeId),
                error: "no debug file found: symbol names only")
        }
        let signal =
            input.signalName == nil && input.signalNumber == nil
            ? nil
            : SymbolicatedCrash.Signal(
                name: input.signalName, number: input.signalNumber, code: input.signalCode,
                address: input.faultAddress)
        return SymbolicatedCrash(
            reason: reason, reasonSource: source, signal: signal, mechanism: input.mechanism,
            executable: input.executable, complete: input.complete, threads: threads,
            unsymbolicatedModules: missing, modulesWithoutDebugInfo: withoutDebugInfo)
    }

    static func frame(index: Int, address: UInt64, _ symbolicator: ImageSymbolicator) -> SymbolicatedCrash.Frame {
        // Frame 0 is the exact PC; every other frame is a return address.
        let lookup = symbolicator.symbolicate(address, isReturnAddress: index > 0)
        let image = lookup.imageIndex.map { symbolicator.images[$0] }
        let symbols = (lookup.result?.frames ?? []).map { frame in
            SymbolicatedCrash.Symbol(
                function: frame.function, rawFunction: frame.rawFunction, file: frame.file, line: frame.line,
                column: frame.column, inlined: frame.isInlined, symbolOffset: frame.symbolOffset)
        }
        return SymbolicatedCrash.Frame(
            index: index, instructionAddr: hex(address), module: image?.path, imageAddr: image.map { hex($0.base) },
            fileAddress: lookup.fileAddress.map(hex), symbols: symbols)
    }

    /// The reason, most specific first: the Swift fatal-error message, the uncaught C++ exception, a
    /// `Swift runtime failure:` inline frame at the crash site, then the signal.
    static func reason(_ input: CrashInput, crashedFrames: [SymbolicatedCrash.Frame]) -> (String, String) {
        reason(input, crashSiteFunctions: crashedFrames.first?.symbols.map(\.function) ?? [])
    }

    /// The reason of `input` as ``SymbolicatedCrash/reason`` gives it, and its source, from the function names
    /// at the crash site (frame 0 of the crashed thread, innermost inlined call first; empty when unknown).
    public static func reason(_ input: CrashInput, crashSiteFunctions: [String?]) -> (
        reason: String, source: String
    ) {
        if let message = input.message?.trimmingTrailingNewlines(), !message.isEmpty { return (message, "message") }
        if let type = input.cxxType {
            return ("uncaught C++ exception \(type)" + (input.cxxWhat.map { ": \($0)" } ?? ""), "cxx_exception")
        }
        let runtimeFailure = crashSiteFunctions.lazy.compactMap { function -> String? in
            let prefix = "Swift runtime failure: "
            guard let function, function.hasPrefix(prefix) else { return nil }
            return String(function.dropFirst(prefix.count))
        }.first
        if let runtimeFailure { return ("Swift runtime failure: \(runtimeFailure)", "dwarf") }
        if let description = input.signalDescription, !description.isEmpty { return (description, "signal") }
        var text = input.signalName ?? input.signalNumber.map { "signal \($0)" } ?? "unknown"
        if let address = input.faultAddress { text += " at \(address)" }
        return (text, "signal")
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var copy = self
        while copy.last == "\n" { copy.removeLast() }
        return copy
    }
}
