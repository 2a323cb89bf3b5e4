import CohorlyCrashModel
import Testing

/// The one reader of report files: format v1 (bare addresses, positional kinds) and v2 (kinds, async chains).
@Suite struct CrashReportReadingTests {
    static let header = #""insert_id":"0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f","timestamp_ms":1796000000000,"pid":42"#

    static func read(_ text: String) throws -> CrashReport { try CrashReport.read(Array(text.utf8)) }

    @Test func aV1ReportHasAnExactFrameZeroAndReturnAddressesAfter() throws {
        let report = try Self.read(
            #"{"format":"cohorly-crash/1","# + Self.header + #","crashed_thread":{"tid":1,"crashed":true,"#
                + #""frames":["0x1000","0x2000","0x3000"],"truncated":false},"complete":true}"#)
        #expect(report.format == CrashReportFormat.v1)
        #expect(
            report.crashedThread?.frames == [
                Frame(0x1000, kind: .pc), Frame(0x2000, kind: .returnAddress), Frame(0x3000, kind: .returnAddress),
            ])
        #expect(report.crashedThread?.frames.map(\.lookupAddress) == [0x1000, 0x1fff, 0x2fff])
        #expect(report.crashedThread?.async == nil)
    }

    @Test func aV2ReportKeepsEveryKindAndItsAsyncChain() throws {
        let report = try Self.read(
            #"{"format":"cohorly-crash/2","# + Self.header
                + #","crashed_thread":{"tid":1,"crashed":true,"frames":[{"addr":"0x1000","kind":"return_address"},"#
                + #"{"addr":"0x2000","kind":"pc"},{"addr":"0x3000","kind":"something_new"},{"addr":"0x4000"}],"#
                + #""async":{"anchor":1,"stop":"task_root","frames":[{"addr":"0x5000","kind":"async_resume"},"#
                + #"{"addr":"0x6000","kind":"async_resume"}]},"truncated":false}}"#)
        let thread = try #require(report.crashedThread)
        // An unknown or missing kind reads as a return address.
        #expect(thread.frames.map(\.kind) == [.returnAddress, .pc, .returnAddress, .returnAddress])
        #expect(thread.frames.map(\.lookupAddress) == [0xfff, 0x2000, 0x2fff, 0x3fff])
        let chain = try #require(thread.async)
        #expect(chain.anchor == 1 && chain.stop == .taskRoot)
        #expect(chain.frames == [Frame(0x5000, kind: .asyncResume), Frame(0x6000, kind: .asyncResume)])
        // Async resume points are function entries: looked up as is.
        #expect(chain.frames.map(\.lookupAddress) == [0x5000, 0x6000])
    }

    @Test func aChainWhoseAnchorIsNotAPhysicalFrameIsDroppedAloneAndTheStackStays() throws {
        for anchor in ["5", "-1", "\"x\""] {
            let report = try Self.read(
                #"{"format":"cohorly-crash/2","# + Self.header
                    + #","crashed_thread":{"frames":[{"addr":"0x1000","kind":"pc"}],"async":{"anchor":"# + anchor
                    + #","stop":"fault","frames":[{"addr":"0x5000","kind":"async_resume"}]}}}"#)
            #expect(report.crashedThread?.frames == [Frame(0x1000, kind: .pc)])
            #expect(report.crashedThread?.async == nil, "anchor \(anchor)")
        }
    }

    @Test func writingGivesV2AndReadingItBackGivesTheSameReport() throws {
        var report = CrashReport(
            insertId: "id", timestampMs: 1_796_000_000_000, pid: 7, executable: "/app", mechanism: .swiftFatal)
        report.message = "main.swift:3: Fatal error: boom"
        report.crashedThread = CrashReport.Thread(
            tid: 7, name: "main", crashed: true,
            frames: [Frame(0x1000, kind: .pc), Frame(0x2000, kind: .returnAddress)],
            registers: ["rip": Address(0x1000)],
            async: AsyncChain(anchor: 0, stop: .limit, frames: [Frame(0x5000, kind: .asyncResume)]))
        report.threads = [
            CrashReport.Thread(tid: 8, name: "w", crashed: false, frames: Frame.called([Address(0x3000)]))
        ]
        report.modules = [CrashReport.Module(path: "/app", base: Address(0x1000), size: Address(0x9000), buildId: "ab")]
        report.breadcrumbs = [Breadcrumb(timestampMs: 5, category: "track", message: "Buy", data: ["n": 1])]
        report.hang = CrashReport.Hang(subject: "main thread", kind: "main_thread", durationMs: 3015, thresholdMs: 2000)
        report.complete = true
        let bytes = report.fileBytes
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""format":"cohorly-crash/2""#))
        #expect(try CrashReport.read(bytes) == report)
    }

    @Test func aReportToSendNeedsItsHeaderAHandMadeOneToSymbolicateDoesNot() throws {
        let text = #"{"format":"cohorly-crash/1","crashed_thread":{"frames":["0x1"]}}"#
        #expect(throws: CrashReportError.corrupt(reason: "missing \"insert_id\"")) { try Self.read(text) }
        let lenient = try CrashReport.read(Array(text.utf8), requiringHeader: false)
        #expect(lenient.crashedThread?.frames == [Frame(1, kind: .pc)])
        #expect(throws: CrashReportError.unsupportedFormat("cohorly-crash/9")) {
            try Self.read(#"{"format":"cohorly-crash/9"}"#)
        }
        #expect(throws: CrashReportError.corrupt(reason: "invalid JSON at byte 1")) { try Self.read("{") }
    }
}
