import CohorlyCrashModel
import Foundation
import Testing

/// A report's bytes are read straight into the model (no JSON tree of the file): the same report as the reader of
/// a parsed document gives, whatever the members' order, types and repetitions; malformed and deep input fails
/// with where and what.
@Suite struct CrashReportStreamingTests {
    static let header = CrashReportReadingTests.header

    /// The report read from the bytes and the one read from their parsed tree (nil: not JSON); both must agree.
    static func expectSame(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectSame(Array(text.utf8), sourceLocation: sourceLocation)
    }

    static func expectSame(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let text = String(decoding: bytes, as: UTF8.self)
        let streamed = Result { () throws(CrashReportError) in try CrashReport.read(bytes, requiringHeader: false) }
        guard let tree = CohorlyValue(bytes: bytes) else {
            guard case .failure(.corrupt(let reason)) = streamed, reason.hasPrefix("invalid JSON at byte ") else {
                Issue.record("not JSON, but read as \(streamed)", sourceLocation: sourceLocation)
                return
            }
            return
        }
        let read = Result { () throws(CrashReportError) in try CrashReport.read(tree, requiringHeader: false) }
        #expect(streamed == read, "\(text)", sourceLocation: sourceLocation)
    }

    @Test func theReportFixturesReadAsTheirTreesDo() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/reports")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        #expect(names.count >= 5)
        for name in names {
            Self.expectSame(Array(try Data(contentsOf: directory.appendingPathComponent(name))))
        }
    }

    /// The `crashinput` fuzz target's corpus (`fixtures/fuzz/crashinput`: seeds and every `crash-*` reproducer)
    /// through the same checks as `Fuzz/crashinput/main.swift`.
    @Test func theCrashInputFuzzCorpusReadsAsItsTreesDo() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz/crashinput")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names.count >= 8)
        for name in names {
            let bytes = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
            Self.expectSame(bytes)
            let whole = try? CohorlyValue.read(bytes) { reader throws(JSONReadError) in try reader.readValue() }
            #expect(whole == CohorlyValue(bytes: bytes), "\(name)")
        }
    }

    @Test func aWrittenReportReadsBackTheSame() throws {
        var report = CrashReport(insertId: "id", timestampMs: 1, pid: 7, executable: "/app", mechanism: .hang)
        report.crashedThread = CrashReport.Thread(
            tid: 7, name: "main", crashed: true,
            frames: [Frame(0x1000, kind: .pc), Frame(0x2000, kind: .returnAddress)],
            registers: ["rip": Address(0x1000)],
            async: AsyncChain(anchor: 1, stop: .limit, frames: [Frame(0x5000, kind: .asyncResume)]))
        report.threads = [CrashReport.Thread(tid: 8, name: "w", crashed: false, frames: [Frame(0x3000, kind: .pc)])]
        report.modules = [CrashReport.Module(path: "/app", base: Address(0x1000), size: Address(0x9000), buildId: "ab")]
        report.breadcrumbs = [Breadcrumb(timestampMs: 5, category: "track", message: "Buy", data: ["n": [1, [2]]])]
        report.context = ["release": "1.0", "nested": ["a": [1, 2, ["b": true]]]]
        report.hang = CrashReport.Hang(subject: "main thread", kind: "main_thread", durationMs: 3015, thresholdMs: 2000)
        #expect(try CrashReport.read(report.fileBytes) == report)
        Self.expectSame(String(decoding: report.fileBytes, as: UTF8.self))
    }

    @Test func repeatedMembersKeepTheLastAndWrongTypesReadAsMissing() {
        let cases = [
            // The thread given twice, the second time not an object: no crashed thread (the last wins).
            #"{"format":"cohorly-crash/2","crashed_thread":{"frames":["0x1"]},"crashed_thread":"x"}"#,
            #"{"format":"cohorly-crash/2","crashed_thread":"x","crashed_thread":{"frames":["0x1"]}}"#,
            // Frames twice, registers not an object, truncated not a bool, the async chain before the frames.
            #"{"format":"cohorly-crash/2","crashed_thread":{"async":{"anchor":1,"frames":[{"addr":"0x9"}],"#
                + #""stop":"fault"},"frames":["0x1"],"frames":[{"addr":"0x2","kind":"pc","addr":"0x3"},"0x4",5,"#
                + #"{"kind":"pc"},[1],{"addr":{"x":1}},null],"registers":{"rip":"0x1","rsp":[1],"rbp":7},"#
                + #""registers":[1],"truncated":"no","tid":2147483648,"name":{"n":1}}}"#,
            #"{"format":"cohorly-crash/2","crashed_thread":{"frames":["0x1"],"truncated":false,"registers":{"a":"x"}}}"#,
            // Containers where scalars belong, scalars where containers belong, lists of the wrong elements.
            #"{"format":"cohorly-crash/2","insert_id":["x"],"timestamp_ms":{"a":1},"pid":1.0,"signal":"SIGSEGV","#
                + #""cxx":[1],"hang":{"subject":["x"],"duration_ms":2.5},"context":[1],"threads":{"a":1},"#
                + #""modules":[1,{"path":"/a","base":"0x10","size":16,"build_id":["x"]},[]],"breadcrumbs":{"a":1},"#
                + #""complete":1,"stack_overflow":true,"threads_requested":3.0,"capture_ns":-1}"#,
            #"{"format":"cohorly-crash/2","signal":{"number":11,"name":"SIGSEGV","code":{"x":1},"address":"0x10"},"#
                + #""threads":[1,"x",{"frames":[]},{"frames":{"a":1}},{}],"breadcrumbs":[1,{"data":[1]},"#
                + #"{"timestamp_ms":3,"category":"c","message":"m","data":{"k":[{"deep":[1]}]}}],"#
                + #""context":{"a":1},"context":{"b":[2]},"mechanism":"swift_fatal","mechanism":"nope"}"#,
            #"{"format":"cohorly-crash/1","format":"cohorly-crash/2","crashed_thread":{"frames":[]}}"#,
            #"{"format":"cohorly-crash/9"}"#, #"{"crashed_thread":{}}"#, "[1]", "\"x\"", "null", "{}",
        ]
        for text in cases { Self.expectSame(text) }
    }

    @Test func malformedInputSaysWhereAndWhat() {
        let cases: [(String, CrashReportError)] = [
            ("{", .corrupt(reason: "invalid JSON at byte 1")),
            (#"{"format":"cohorly-crash/2"} x"#, .corrupt(reason: "invalid JSON at byte 29")),
            (
                #"{"format":"cohorly-crash/2","crashed_thread":{"frames":["0x1",]}}"#,
                .corrupt(reason: "invalid JSON at byte 62")
            ),
            ("", .corrupt(reason: "invalid JSON at byte 0")),
            ("[1,2]", .corrupt(reason: "not a JSON object")),
        ]
        for (text, error) in cases {
            #expect(throws: error, "\(text)") { try CrashReport.read(Array(text.utf8), requiringHeader: false) }
            Self.expectSame(text)
        }
    }

    @Test func nestingIsReadTo512LevelsAndRefusedPastThemWithoutACrash() throws {
        func report(contextDepth depth: Int) -> [UInt8] {
            // The context object is level 2; `depth` levels in all.
            Array(
                (#"{"format":"cohorly-crash/2","context":{"a":"# + String(repeating: "[", count: depth - 2) + "1"
                    + String(repeating: "]", count: depth - 2) + "}}").utf8)
        }
        #expect(try CrashReport.read(report(contextDepth: 512), requiringHeader: false).context["a"] != nil)
        #expect(throws: CrashReportError.corrupt(reason: "JSON nested deeper than 512 levels at byte 553")) {
            try CrashReport.read(report(contextDepth: 513), requiringHeader: false)
        }
        // At the limit on a thread with a small stack (512 KiB; a main thread has 8 MiB): the recursion fits.
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var read: CrashReport?
        let limit = report(contextDepth: 512)
        let thread = Thread {
            read = try? CrashReport.read(limit, requiringHeader: false)
            let deep = (0..<510).reduce(CohorlyValue.int(1)) { inner, _ in .array([inner]) }
            read = read.flatMap { $0.context["a"] == deep ? $0 : nil }
            done.signal()
        }
        thread.stackSize = 512 << 10
        thread.start()
        done.wait()
        #expect(read != nil)
        // Far deeper (a stack-exhausting document for a reader without a limit), and deep in a skipped member.
        let deep = Array((#"{"format":"cohorly-crash/2","junk":"# + String(repeating: "[", count: 200_000)).utf8)
        #expect(throws: CrashReportError.corrupt(reason: "JSON nested deeper than 512 levels at byte 546")) {
            try CrashReport.read(deep, requiringHeader: false)
        }
    }
}
