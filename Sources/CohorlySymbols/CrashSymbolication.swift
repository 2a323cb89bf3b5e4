#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        let signal =
            input.signalName == nil && input.signalNumber == nil
            ? nil
            : SymbolicatedCrash.Signal(
                name: input.signalName, number: input.signalNumber, code: input.signalCode,
                address: input.faultAddress)
        return SymbolicatedCrash(
            reason: reason, reasonSource: source, signal: signal, mechanism: input.mechanism,
            executable: input.executable, complete: input.complete, threads: threads,
            unsymbolicatedModules: missing)
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
        if let message = input.message?.trimmingTrailingNewlines(), !message.isEmpty { return (message, "message") }
        if let type = input.cxxType {
            return ("uncaught C++ exception \(type)" + (input.cxxWhat.map { ": \($0)" } ?? ""), "cxx_exception")
        }
        let runtimeFailure = crashedFrames.first?.symbols.lazy.compactMap { symbol -> String? in
            let prefix = "Swift runtime failure: "
            guard let function = symbol.function, function.hasPrefix(prefix) else { return nil }
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

extension SymbolicatedCrash {
    /// The crash printed like a Swift backtrace: reason first, then each thread, `#N 0xADDR module function at
    /// file:line:col`, inlined frames indented under their frame, and a line naming the modules left raw.
    /// `header` lines (release, user, time…) go right after the reason.
    public func text(header: [String] = []) -> String {
        var lines: [String] = ["Crash: \(reason)"]
        lines += header
        if let signal {
            var text = "Signal: \(signal.name ?? "?") (\(signal.number ?? 0)), code \(signal.code ?? 0)"
            if let address = signal.address { text += ", address \(address)" }
            lines.append(text)
        }
        if let executable { lines.append("Executable: \(executable)") }
        if !complete { lines.append("Note: the report is incomplete (salvaged from a torn file).") }
        for thread in threads {
            lines.append("")
            var title = "Thread \(thread.tid.map(String.init) ?? "?")"
            if let name = thread.name, !name.isEmpty { title += " \"\(name)\"" }
            if thread.crashed { title += " crashed" }
            lines.append(title + ":")
            if thread.frames.isEmpty { lines.append("  (no frames: the thread did not answer)") }
            // Runs of one repeated frame (deep recursion) are folded into one line after their first frame.
            var index = 0
            while index < thread.frames.count {
                let frame = thread.frames[index]
                lines += Self.lines(of: frame)
                var next = index + 1
                while next < thread.frames.count && thread.frames[next].instructionAddr == frame.instructionAddr {
                    next += 1
                }
                if next - index > 2 {
                    lines.append(
                        "    … \(next - index - 1) more frames like #\(frame.index) (#\(frame.index + 1)–#\(next - 1))")
                    index = next
                } else {
                    index += 1
                }
            }
            if thread.truncated { lines.append("  … (truncated)") }
        }
        if !unsymbolicatedModules.isEmpty {
            lines.append("")
            let names = unsymbolicatedModules.map { $0.path + ($0.buildId.map { " (build id \($0))" } ?? "") }
            lines.append("Unsymbolicated modules (no usable debug file found): " + names.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    private static func lines(of frame: Frame) -> [String] {
        let number = "#\(frame.index)"
        let padded = number + String(repeating: " ", count: max(1, 4 - number.count))
        let digits = String(frame.instructionAddr.dropFirst(2))
        let address = "0x" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
        let module = frame.module.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "???"
        let head = "\(padded)\(address) \(module)"
        guard let physical = frame.symbols.last else {
            if let offset = frame.fileAddress { return ["\(head) + \(offset)"] }
            return [head]
        }
        var lines = ["\(head) \(describe(physical))"]
        // Inlined frames indented under their physical frame, from the outermost call inward.
        for (depth, inlined) in frame.symbols.dropLast().reversed().enumerated() {
            lines.append(String(repeating: " ", count: 6 + 2 * depth) + "[inlined] " + describe(inlined))
        }
        return lines
    }

    private static func describe(_ symbol: Symbol) -> String {
        var text = symbol.function ?? "??"
        if let offset = symbol.symbolOffset { text += " + \(offset)" }
        if let file = symbol.file {
            text += " at \(file)"
            if symbol.line > 0 { text += ":\(symbol.line)" + (symbol.column > 0 ? ":\(symbol.column)" : "") }
        }
        return text
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var copy = self
        while copy.last == "\n" { copy.removeLast() }
        return copy
    }
}
