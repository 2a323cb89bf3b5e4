import CohorlyCrashModel

extension SymbolicatedCrash {
    /// A frame of the crash model, its symbols and lookup filled in.
    typealias StackFrame = CapturedException.StackFrame

    /// How ``text(header:options:)`` prints a crash.
    public struct TextOptions: Sendable {
        /// How function names are printed, the same for every frame (default ``Demangler/Style/simplified``, as
        /// the Swift backtracer prints them; ``Demangler/Style/full`` for `--no-sugar`).
        public var names: Demangler.Style
        /// The advice printed when some frames stay raw or without lines (default: nil, no advice), e.g. which
        /// option or command adds the missing debug files.
        public var missingDebugFilesAdvice: String?
        /// Whether a thread's async callers are shown after the frame they continue from, with the executor's
        /// frames below folded into one line (default true); false prints the raw physical stack (`--no-async`).
        public var showsAsyncCallers: Bool
        /// Whether runs of ``foldedRun`` or more frames that are not the app's code (`in_app` false: a framework
        /// linked into the executable, the runtime, compiler thunks) are folded into one line naming their
        /// modules (default true; `--all-frames` shows them). A thread's first frame is never folded.
        public var foldsOtherCode: Bool

        /// Options; by default simplified names, no advice, async callers shown, other code folded.
        public init(
            names: Demangler.Style = .simplified, missingDebugFilesAdvice: String? = nil,
            showsAsyncCallers: Bool = true, foldsOtherCode: Bool = true
        ) {
            self.names = names
            self.missingDebugFilesAdvice = missingDebugFilesAdvice
            self.showsAsyncCallers = showsAsyncCallers
            self.foldsOtherCode = foldsOtherCode
        }
    }

    /// The shortest run of frames that are not the app's code that the text folds (the web page's rule).
    public static let foldedRun = 3

    /// The length of the run of frames that are not the app's code starting at `start` of `frames`, when the text
    /// folds it (at least ``foldedRun``, not a thread's first frame, folding on); else 0.
    static func otherCodeRun(_ frames: [StackFrame], at start: Int, isFirst: Bool, _ options: TextOptions) -> Int {
        guard options.foldsOtherCode, !isFirst, frames[start].inAppAnswer == false else { return 0 }
        var end = start
        while end < frames.count && frames[end].inAppAnswer == false { end += 1 }
        return end - start >= foldedRun ? end - start : 0
    }

    /// The one line a folded run of other code becomes: how many, their numbers, and their modules (the Swift
    /// module of each function, else its image's file name).
    static func otherCodeLine(_ run: ArraySlice<StackFrame>, first: Int, last: Int) -> String {
        var modules: [String] = []
        for frame in run {
            var module = "???"
            if let swiftModule = frame.symbols.last?.rawFunction.flatMap(SwiftMangling.module(of:)) {
                module = swiftModule
            } else if let path = frame.lookup?.imagePath {
                module = path.split(separator: "/").last.map(String.init) ?? path
            }
            if !modules.contains(module) { modules.append(module) }
        }
        return "    … \(run.count) frames of other code (#\(first)–#\(last): "
            + TerminalText.escaped(modules.joined(separator: ", ")) + "; --all-frames shows them)"
    }

    /// Functions of the crash recorder itself (the C++ terminate hook and the report writer): frames at the
    /// top of the crashed thread that name one of them are hidden from the text, as the Swift backtracer hides
    /// its own frames. JSON output keeps them.
    package static func isRecorderFrame(_ frame: CapturedException.StackFrame) -> Bool {
        frame.symbols.last?.namesCrashRecorder ?? false
    }

    /// Whether this was captured while the app lived on, not a crash: a hang (whether or not the process died
    /// in it, the hung thread did not crash) or a handled error. Its text says `Captured:` and `Thread N
    /// captured`, where a crash says `Crash:` and `Thread N crashed`.
    public var isCapture: Bool { mechanism == "hang" || exception.handled }

    /// The crash printed like a Swift backtrace: reason first, then each thread, `#N 0xADDR module function at
    /// file:line:col`, inlined frames indented under their frame, and lines naming the modules left raw or
    /// without lines. `header` lines (release, user, time…) go right after the reason. Text that came from the
    /// crashed process or its files (reason, header, names, paths) has its control characters escaped. Every
    /// name is in `options.names`; a file is printed only with its line (`FrameSymbol.sourceLocation`).
    public func text(header: [String] = [], options: TextOptions = TextOptions()) -> String {
        var lines: [String] = ["\(isCapture ? "Captured" : "Crash"): \(TerminalText.escaped(reason))"]
        lines += header.map(TerminalText.escaped)
        if let signal = exception.facts.signal {
            let name = signal.name.isEmpty ? "?" : signal.name
            lines.append(
                "Signal: \(TerminalText.escaped(name)) (\(signal.number)), code \(signal.code), address \(signal.address)"
            )
        }
        if let executable = exception.executable { lines.append("Executable: \(TerminalText.escaped(executable))") }
        if !exception.complete { lines.append("Note: the report is incomplete (salvaged from a torn file).") }
        // An abnormal exit (SIGKILL, OOM kill, power loss) has no stack: nothing ran in the process as it died.
        let abnormalExit = mechanism == "abnormal_exit"
        if abnormalExit { lines.append("No stack: the process was killed (or lost power); nothing could record it.") }
        for thread in threads where !abnormalExit {
            lines.append("")
            var title = "Thread \(thread.tid.map(String.init) ?? "?")"
            if let name = thread.name, !name.isEmpty { title += " \"\(TerminalText.escaped(name))\"" }
            if thread.crashed { title += isCapture ? " captured" : " crashed" }
            lines.append(title + ":")
            if thread.frames.isEmpty { lines.append("  (no frames: the thread did not answer)") }
            var frames = thread.frames[...]
            var hidden = 0
            if thread.crashed {
                hidden = frames.prefix(while: Self.isRecorderFrame).count
                if hidden < frames.count { frames = frames.dropFirst(hidden) } else { hidden = 0 }
            }
            if options.showsAsyncCallers, let chain = thread.async, !chain.frames.isEmpty, chain.anchor >= hidden,
                chain.anchor < thread.frames.count
            {
                lines += Self.asyncLines(thread, physical: frames, chain: chain, options)
                continue
            }
            lines += Self.lines(of: frames, options)
            if thread.truncated { lines.append("  … (truncated)") }
        }
        lines += footer(options)
        return lines.joined(separator: "\n")
    }

    /// Frames, with runs of one repeated frame (deep recursion) folded into one line after their first frame, and
    /// runs of other code (``TextOptions/foldsOtherCode``) into one line.
    private static func lines(of frames: ArraySlice<StackFrame>, _ options: TextOptions) -> [String] {
        var lines: [String] = []
        let all = Array(frames)
        var index = frames.startIndex
        while index < frames.endIndex {
            let frame = frames[index]
            let run = otherCodeRun(all, at: index - frames.startIndex, isFirst: index == frames.startIndex, options)
            if run > 0 {
                let folded = frames[index..<(index + run)]
                lines.append(otherCodeLine(folded, first: index, last: index + run - 1))
                index += run
                continue
            }
            lines += Self.lines(of: frame, options, number: index)
            var next = index + 1
            while next < frames.endIndex && frames[next].frame.address == frame.frame.address { next += 1 }
            if next - index > 2 {
                lines.append("    … \(next - index - 1) more frames like #\(index) (#\(index + 1)–#\(next - 1))")
                index = next
            } else {
                index += 1
            }
        }
        return lines
    }

    /// The lines naming the modules left raw or without lines, and the advice on adding their debug files.
    private func footer(_ options: TextOptions) -> [String] {
        var lines: [String] = []
        func describe(_ modules: [MissingModule]) -> String {
            modules.map { TerminalText.escaped($0.path) + ($0.buildId.map { " (build id \($0))" } ?? "") }
                .joined(separator: ", ")
        }
        if !unsymbolicatedModules.isEmpty {
            lines.append("Unsymbolicated modules (no usable debug file found): " + describe(unsymbolicatedModules))
        }
        let withoutLines = modulesWithoutDebugInfo ?? []
        if !withoutLines.isEmpty {
            lines.append("Symbol names only, no files or lines (no debug file found): " + describe(withoutLines))
        }
        if !lines.isEmpty, let advice = options.missingDebugFilesAdvice { lines.append(advice) }
        return lines.isEmpty ? [] : [""] + lines
    }

    static func lines(of frame: StackFrame, _ options: TextOptions, number index: Int, tag: String = "") -> [String] {
        let number = "#\(index)"
        let padded = number + String(repeating: " ", count: max(1, 4 - number.count))
        let digits = String(frame.frame.address.value, radix: 16)
        let address = "0x" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
        let path = frame.lookup?.imagePath
        let module = path.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "???"
        let head = "\(padded)\(address) \(tag)\(TerminalText.escaped(module))"
        guard let physical = frame.symbols.last else {
            if let offset = frame.lookup?.fileAddress { return ["\(head) + \(Address(offset))"] }
            return [head]
        }
        var lines = ["\(head) \(describe(physical, options))"]
        // Inlined frames indented under their physical frame, from the outermost call inward.
        for (depth, inlined) in frame.symbols.dropLast().reversed().enumerated() {
            lines.append(String(repeating: " ", count: 6 + 2 * depth) + "[inlined] " + describe(inlined, options))
        }
        return lines
    }

    /// The symbol's function name in the style of `options`.
    static func name(_ symbol: Symbol, _ options: TextOptions) -> String? {
        Demangler.name(function: symbol.function, rawFunction: symbol.rawFunction, style: options.names)
    }

    private static func describe(_ symbol: Symbol, _ options: TextOptions) -> String {
        var text = TerminalText.escaped(name(symbol, options) ?? "??")
        if let offset = symbol.symbolOffset { text += " + \(offset)" }
        if let location = symbol.sourceLocation { text += " at \(TerminalText.escaped(location))" }
        return text
    }
}
