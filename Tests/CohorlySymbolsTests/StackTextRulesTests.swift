import Foundation
import Testing

@testable import CohorlySymbols

/// The text's rules, on crashes as the collector's JSON gives them: a file only with a line, `Captured` for a
/// hang or a handled error, and names in one style whether a frame carries its linkage name or not.
@Suite struct StackTextRulesTests {
    static func crash(mechanism: String, handled: Bool?, symbols: [String]) throws -> SymbolicatedCrash {
        let frames = symbols.enumerated().map { index, symbol in
            """
            {"index":\(index),"instruction_addr":"0x\(String(0x1000 + index, radix: 16))","module":"/lib/libx.so",
             "symbols":[\(symbol)]}
            """
        }
        let json = """
            {"reason":"something happened","reason_source":"signal","mechanism":"\(mechanism)",
             \(handled.map { "\"handled\":\($0)," } ?? "")"complete":true,"unsymbolicated_modules":[],
             "threads":[{"tid":7,"name":"main","crashed":true,"truncated":false,
                         "frames":[\(frames.joined(separator: ","))]}]}
            """
        return try JSONDecoder().decode(SymbolicatedCrash.self, from: Data(json.utf8))
    }

    @Test func aFileIsPrintedOnlyWithItsLine() throws {
        let text =
            try Self.crash(
                mechanism: "signal", handled: nil,
                symbols: [
                    #"{"function":"swift::runJob(swift::Job*)","file":"crtstuff.c","line":0,"column":0,"inlined":false}"#,
                    #"{"function":"f","file":"/<compiler-generated>","line":0,"column":0,"inlined":false}"#,
                    #"{"function":"g","file":"./csu/libc-start.c","line":360,"column":3,"inlined":false}"#,
                    #"{"function":"h","file":"/src/a.c","line":12,"column":0,"inlined":false}"#,
                ]
            ).text() + "\n"
        #expect(text.contains("libx.so swift::runJob(swift::Job*)\n"))
        #expect(text.contains("libx.so f\n"))
        #expect(text.contains("libx.so g at ./csu/libc-start.c:360:3\n"))
        #expect(text.contains("libx.so h at /src/a.c:12\n"))
        #expect(!text.contains("crtstuff") && !text.contains("compiler-generated"))
    }

    @Test(arguments: [("hang", nil as Bool?, true), ("generic", true, true), ("signal", false, false)])
    func hangsAndHandledErrorsAreCapturedNotCrashed(mechanism: String, handled: Bool?, captured: Bool) throws {
        let crash = try Self.crash(mechanism: mechanism, handled: handled, symbols: [])
        #expect(crash.isCapture == captured)
        let text = crash.text()
        #expect(text.hasPrefix(captured ? "Captured: " : "Crash: "))
        #expect(text.contains(captured ? "Thread 7 \"main\" captured:" : "Thread 7 \"main\" crashed:"))
    }

    @Test func aFrameWithItsLinkageNameIsSimplifiedWhoeverResolvedIt() throws {
        // The device's frame (full name + `symbol`, read as raw_function) and the collector's read alike.
        let full =
            "Swift._assertionFailure(_: Swift.StaticString, _: Swift.String, file: Swift.StaticString, "
            + "line: Swift.UInt, flags: Swift.UInt32) -> Swift.Never"
        let raw = "$ss17_assertionFailure__4file4line5flagss5NeverOs12StaticStringV_SSAHSus6UInt32VtF"
        let crash = try Self.crash(
            mechanism: "swift_fatal", handled: false,
            symbols: [#"{"function":"\#(full)","raw_function":"\#(raw)","line":0,"column":0,"inlined":false}"#])
        #expect((crash.text() + "\n").contains("libx.so _assertionFailure(_:_:file:line:flags:)\n"))
        #expect((crash.text(options: .init(names: .full)) + "\n").contains("libx.so \(full)\n"))
    }
}
