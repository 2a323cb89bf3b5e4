import CohorlyCrashModel
import Testing

/// One function decides the reason, with one precedence, for the device's events and for every reader.
@Suite struct CrashReasonTests {
    static let segv = CrashReport.Signal(number: 11, name: "SIGSEGV", code: 1, address: Address(0))

    @Test func theMostSpecificReasonWins() {
        let cxx = CrashReport.CxxException(type: "std::runtime_error", what: "bad")
        let site = ["Swift runtime failure: Index out of range", "main"]
        // A C++ exception over a Swift message over a crash-site trap over the signal.
        var facts = CrashReason.Facts(cxx: cxx, message: "m.swift:1: Fatal error: boom", signal: Self.segv)
        #expect(CrashReason.describe(facts, crashSite: site).source == "cxx_exception")
        #expect(CrashReason.describe(facts).summary == "uncaught C++ exception std::runtime_error: bad")
        facts.cxx = nil
        #expect(CrashReason.describe(facts, crashSite: site).summary == "Fatal error: boom")
        facts.message = nil
        #expect(CrashReason.describe(facts, crashSite: site).summary == "Swift runtime failure: Index out of range")
        #expect(CrashReason.describe(facts, crashSite: site).source == "dwarf")
        #expect(CrashReason.describe(facts).summary == "SIGSEGV: Segmentation fault: address not mapped at 0x0")
        #expect(CrashReason.needsCrashSite(facts))
        // An event's description stands, a bare signal's gives way to the crash site.
        let given = CrashDescription(
            type: "SIGILL", value: "Illegal instruction at 0x10", mechanism: "signal", issueName: nil)
        #expect(
            CrashReason.describe(.init(given: given), crashSite: site).type
                == "Swift runtime failure: Index out of range")
        #expect(CrashReason.describe(.init(given: given)).summary == "SIGILL: Illegal instruction at 0x10")
        let handled = CrashDescription(type: "E", value: "v", mechanism: "generic", issueName: nil)
        #expect(CrashReason.describe(.init(given: handled), crashSite: site) == handled)
        #expect(!CrashReason.needsCrashSite(.init(given: handled)))
    }

    @Test func aHangSaysHowLongInSecondsWithTwoDecimals() {
        let hang = CrashReport.Hang(subject: "main thread", kind: "main_thread", durationMs: 3015, thresholdMs: 2000)
        #expect(CrashReason.describeHang(hang, diedHung: false).value == "main thread blocked for 3.02 s")
        #expect(
            CrashReason.describe(.init(hang: hang)).value
                == "main thread blocked for at least 3.02 s when the process ended")
        let short = CrashReport.Hang(subject: "x", kind: "thread", durationMs: 40, thresholdMs: 10)
        #expect(CrashReason.describeHang(short, diedHung: false).value == "x blocked for 0.04 s")
    }
}
