import Foundation
import Testing

@testable import CohorlySymbols

/// The text form of a crash: names as the Swift backtracer prints them, the recorder's own frames hidden,
/// outside text escaped, and advice when frames stay raw.
@Suite struct SymbolicatedCrashTextTests {
    @Test func simplifiedNamesAreTheRuntimeBacktracers() {
        #expect(Demangler.simplified("$sSiSgMa") == "type metadata accessor for Int?")
        #expect(Demangler.simplified("$sSaySiGMa") == "type metadata accessor for [Int]")
        #expect(
            Demangler.simplified("$s4shop7PricingO6scaled_2byxx_xtSzRzlFZSi_Tg5")
                == "specialized static Pricing.scaled<A>(_:by:)")
        // The full form keeps modules, argument and result types.
        #expect(
            Demangler.demangle("$s4shop7PricingO6scaled_2byxx_xtSzRzlFZSi_Tg5")
                == "generic specialization <Swift.Int> of static shop.Pricing.scaled<A where A: Swift.BinaryInteger>"
                + "(_: A, by: A) -> A")
        // Not mangled: no simplified form; the frame keeps its name.
        #expect(Demangler.simplified("main") == nil)
        #expect(Demangler.name(function: "main", rawFunction: "main", style: .simplified) == "main")
        #expect(
            Demangler.name(function: "full", rawFunction: "$sSiSgMa", style: .full) == "full")
    }

    /// A crash decoded from the collector's JSON, as `crashes show` gets it.
    static func crash(frames: [(raw: String, function: String)], threadName: String = "main") throws
        -> SymbolicatedCrash
    {
        let symbols = frames.enumerated().map { index, frame in
            """
            {"index":\(index),"instruction_addr":"0x\(String(0x1000 + index, radix: 16))","module":"/app/shop",
             "symbols":[{"function":"\(frame.function)","raw_function":"\(frame.raw)","line":0,"column":0,
             "inlined":false}]}
            """
        }
        let json = """
            {"reason":"uncaught C++ exception std::runtime_error: boom\\u001b[2J\\u0007","reason_source":"cxx_exception",
             "complete":true,"unsymbolicated_modules":[],
             "threads":[{"tid":1,"name":"\(threadName)","crashed":true,"truncated":false,
                         "frames":[\(symbols.joined(separator: ","))]}]}
            """
        return try JSONDecoder().decode(SymbolicatedCrash.self, from: Data(json.utf8))
    }

    /// Runs of three or more frames that are not the app's code (a framework linked into the executable, thunks)
    /// fold into one line naming their modules, as on the web page; the first frame never folds, a run of two
    /// stays, and `--all-frames` (foldsOtherCode false) shows every frame (issue 38, item 2).
    @Test func runsOfOtherCodeFoldIntoOneLine() throws {
        var crash = try Self.crash(frames: [
            ("$s11Hummingbird6RouterV5crashyyF", "Hummingbird.Router.crash()"),
            ("$s6Orders4QuoteV5totalSiyF", "Orders.Quote.total()"),
            ("$s11Hummingbird6RouterV6handleyyF", "Hummingbird.Router.handle()"),
            ("$s7NIOCore7ChannelV4readyyF", "NIOCore.Channel.read()"),
            ("$s11Hummingbird10MiddlewareV3runyyF", "Hummingbird.Middleware.run()"),
            ("$s6Orders6RoutesV5quoteyyF", "Orders.Routes.quote()"),
            ("$s11Hummingbird6RouterV6handleyyF", "Hummingbird.Router.handle()"),
            ("$s7NIOCore7ChannelV4readyyF", "NIOCore.Channel.read()"),
        ])
        let inApp = [false, true, false, false, false, true, false, false]
        for index in inApp.indices { crash.threads[0].frames[index].inAppAnswer = inApp[index] }
        let text = crash.text()
        #expect(text.contains("#0  0x0000000000001000 shop Router.crash()"), "the first frame never folds: \(text)")
        #expect(
            text.contains("    … 3 frames of other code (#2–#4: Hummingbird, NIOCore; --all-frames shows them)"),
            "\(text)")
        #expect(!text.contains("Middleware.run()"), "\(text)")
        #expect(text.contains("#5  0x0000000000001005 shop Routes.quote()"))
        // A run of two stays as it is.
        #expect(text.contains("#6") && text.contains("#7"), "\(text)")
        let all = crash.text(options: .init(foldsOtherCode: false))
        #expect(all.contains("Middleware.run()") && !all.contains("frames of other code"))
        // Frames nobody decided (in_app absent) never fold.
        for index in inApp.indices { crash.threads[0].frames[index].inAppAnswer = nil }
        #expect(!crash.text().contains("frames of other code"))
    }

    @Test func anAbnormalExitSaysItHasNoStackInsteadOfListingAnEmptyThread() throws {
        let json = """
            {"reason":"OOMKill: Killed by the kernel's OOM killer","reason_source":"signal","mechanism":"abnormal_exit",
             "complete":true,"unsymbolicated_modules":[],
             "threads":[{"crashed":true,"truncated":false,"frames":[]}]}
            """
        let text = try JSONDecoder().decode(SymbolicatedCrash.self, from: Data(json.utf8)).text()
        #expect(text.hasPrefix("Crash: OOMKill: Killed by the kernel's OOM killer\n"))
        #expect(text.contains("No stack: the process was killed"))
        #expect(!text.contains("did not answer"))
    }

    @Test func theRecordersOwnFramesAreHiddenFromTheCrashedThreadsTop() throws {
        let crash = try Self.crash(frames: [
            ("cly_handle_crash", "cly_handle_crash"),
            ("_ZN12_GLOBAL__N_114terminate_hookEv", "(anonymous namespace)::terminate_hook()"),
            ("_ZSt9terminatev", "std::terminate()"),
            ("$s4shop3runySiSaySSGF", "shop.run(Swift.Array<Swift.String>) -> Swift.Int"),
        ])
        let lines = crash.text().split(separator: "\n").map(String.init)
        #expect(!lines.contains { $0.contains("cly_handle_crash") || $0.contains("terminate_hook") })
        #expect(lines.contains { $0.hasPrefix("#2  0x0000000000001002 shop std::terminate()") })
        #expect(lines.contains { $0.hasPrefix("#3  0x0000000000001003 shop run(_:)") })
        // Full names behind the option; the frames stay in the data (JSON output keeps them).
        let full = crash.text(options: .init(names: .full))
        #expect(full.contains("#3  0x0000000000001003 shop shop.run(Swift.Array<Swift.String>) -> Swift.Int"))
        #expect(crash.threads[0].frames.count == 4)
    }

    @Test func outsideTextIsEscapedForTheTerminal() throws {
        let crash = try Self.crash(frames: [("f", "f")], threadName: #"evil\u001b]0;title\u0007\r"#)
        let text = crash.text()
        #expect(!text.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 || $0.value == 0x0d })
        #expect(text.hasPrefix("Crash: uncaught C++ exception std::runtime_error: boom\\x1b[2J\\x07\n"))
        #expect(text.contains("Thread 1 \"evil\\x1b]0;title\\x07\\r\" crashed:"))
        #expect(TerminalText.escaped("é\u{9b}\n\t") == "é\\u{9b}\\n\\t")
        #expect(TerminalText.escaped("plain") == "plain")
    }

    /// The explicit bidirectional controls are shown, not obeyed (issue 41, item 4): "crash in \u{202e}txt.exe"
    /// must not print as "crash in exe.txt", nor an isolate spill into the next column.
    @Test func bidirectionalControlsAreShownVisibly() {
        #expect(TerminalText.escaped("crash in \u{202e}txt.exe") == "crash in \\u{202e}txt.exe")
        let all = (0x202a...0x202e).map { Unicode.Scalar($0)! } + (0x2066...0x2069).map { Unicode.Scalar($0)! }
        for scalar in all {
            let escaped = TerminalText.escaped("a" + String(scalar) + "b")
            #expect(escaped == "a\\u{" + String(scalar.value, radix: 16) + "}b")
        }
        // Right-to-left letters and the implicit marks are text, not controls.
        #expect(TerminalText.escaped("שלום \u{200f}") == "שלום \u{200f}")
        // Server text is clipped too.
        let long = TerminalText.fromServer(String(repeating: "y", count: 1000))
        #expect(long == String(repeating: "y", count: TerminalText.serverTextLimit) + "… (700 more characters)")
    }

    @Test func rawModulesComeWithAdvice() throws {
        var crash = try Self.crash(frames: [("f", "f")])
        #expect(!crash.text(options: .init(missingDebugFilesAdvice: "Hint: add them")).contains("Hint"))
        crash.modulesWithoutDebugInfo = [.init(path: "/lib/libc.so.6", buildId: "ab", error: "symbol names only")]
        let text = crash.text(options: .init(missingDebugFilesAdvice: "Hint: add them"))
        #expect(
            text.contains("\nSymbol names only, no files or lines (no debug file found): /lib/libc.so.6 (build id ab)"))
        #expect(text.hasSuffix("\nHint: add them"))
    }
}
