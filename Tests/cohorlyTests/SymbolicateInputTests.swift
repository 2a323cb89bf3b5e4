import Foundation
import Testing

/// What `cohorly symbolicate` does with hostile report files: memory follows what the report keeps (its frames
/// are read straight into the crash model, not through a JSON tree of the file), and a malformed, too deep or too
/// large file is an error naming the file and the problem, exit 1, never a crash.
@Suite struct SymbolicateInputTests {
    /// A v2 report whose crashed thread has `frames` frames (about 54 bytes each).
    static func report(frames: Int) -> String {
        let list = (0..<frames).map {
            #"{"addr":"0x7f00\#(String(0x1000_0000 + $0 * 16, radix: 16))","kind":"return_address"}"#
        }
        return #"{"format":"cohorly-crash/2","signal":{"number":11,"name":"SIGSEGV","code":1,"address":"0x0"},"#
            + #""crashed_thread":{"tid":7,"name":"main","crashed":true,"frames":[\#(list.joined(separator: ","))]}}"#
    }

    /// `symbolicate --json PATH`'s exit status, standard error and peak resident memory (KiB), measured by
    /// `/usr/bin/time` (a child of this test process would start from the test process's own peak).
    static func symbolicate(_ path: String) throws -> (status: Int32, stderr: String, peakKB: Int) {
        let measure = Scratch.path("peak-\(UUID())")
        let result = try CLI.run(
            ["-f", "%M", "-o", measure, CLI.path, "symbolicate", "--json", path], executable: "/usr/bin/time")
        let lines = try String(contentsOfFile: measure, encoding: .utf8).split(separator: "\n")
        return (result.status, result.stderr, Int(lines.last ?? "") ?? 0)
    }

    @Test func aLargeReportCostsLittleMoreThanItsBytesAndTheFramesKept() throws {
        let small = try SymbolicateCommandTests.temporary("small-report.json", Self.report(frames: 10))
        let text = Self.report(frames: 150_000)
        let large = try SymbolicateCommandTests.temporary("large-report.json", text)
        let base = try Self.symbolicate(small)
        let run = try Self.symbolicate(large)
        #expect(base.status == 0 && run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("thread 7: 150000 frames, the first 100 are symbolicated"), "\(run.stderr)")
        // The file (8 MB) is read whole, and its 150,000 frames are kept (16 bytes in the report, 32 as the
        // crash's): about 2× the file. Through a JSON tree of the file it took over 6×.
        let overKB = run.peakKB - base.peakKB
        let fileKB = text.utf8.count / 1024
        #expect(overKB < fileKB * 7 / 2, "\(overKB) KiB over a small report's peak for a \(fileKB) KiB report")
    }

    /// An `$exception` event whose crashed thread has `frames` frames with names and lines (about 210 bytes each).
    static func event(frames: Int) -> String {
        let list = (0..<frames).map {
            #"{"instruction_addr":"0x7f00\#(String(0x1000_0000 + $0 * 16, radix: 16))","image_addr":"0x7f0000000000","#
                + #""module":"/usr/lib/libx.so","instruction_addr_kind":"return_address","in_app":false,"#
                + #""function":"f\#($0)","filename":"a.swift","lineno":\#($0)}"#
        }
        return #"{"event":"$exception","uuid":"u1","properties":{"$exception_list":[{"type":"SIGSEGV","#
            + #""mechanism":{"type":"signal"},"thread_id":7,"stacktrace":{"frames":[\#(list.joined(separator: ","))]}}]}}"#
    }

    @Test func aLargeEventCostsLessThanItsJSONTree() throws {
        let small = try SymbolicateCommandTests.temporary("small-event.json", Self.event(frames: 10))
        let text = Self.event(frames: 40_000)
        let large = try SymbolicateCommandTests.temporary("large-event.json", text)
        let base = try Self.symbolicate(small)
        let run = try Self.symbolicate(large)
        #expect(base.status == 0 && run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("thread 7: 40000 frames, the first 100 are symbolicated"), "\(run.stderr)")
        // The file (8 MB) and its frames as read and as the crash's, with their names: about 3.7× the file.
        // Through a JSON tree of the file it took 6.5×.
        let overKB = run.peakKB - base.peakKB
        let fileKB = text.utf8.count / 1024
        #expect(overKB < fileKB * 5, "\(overKB) KiB over a small event's peak for a \(fileKB) KiB event")
    }

    @Test func aMalformedDeepOrOversizedReportIsAnErrorNamingTheFileAndTheProblem() throws {
        let cut = Self.report(frames: 50)
        let cases: [(name: String, contents: String, problem: String)] = [
            ("cut.json", String(cut.prefix(cut.utf8.count / 2)), "not a crash report (invalid JSON at byte "),
            (
                "deep.json", #"{"format":"cohorly-crash/2","context":{"a":"# + String(repeating: "[", count: 100_000),
                "not a crash report (JSON nested deeper than 512 levels at byte 553)"
            ),
            (
                "array.json", "[" + String(repeating: "[1],", count: 10_000) + "1]",
                "no $exception event among the 10001 events"
            ),
            ("binary.json", "{\"format\":\"cohorly-crash/2\",\u{1}}", "not a crash report (invalid JSON at byte 28)"),
        ]
        for (name, contents, problem) in cases {
            let path = try SymbolicateCommandTests.temporary(name, contents)
            let result = try CLI.run(["symbolicate", "--json", path])
            #expect(result.status == 1, "\(name): \(result.stderr)")
            #expect(result.stderr.hasPrefix("cohorly: \(path): \(problem)"), "\(name): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // Past the 64 MiB cap: refused before it is read (a sparse file, so the test writes nothing).
        let huge = Scratch.path("huge.json")
        #expect(FileManager.default.createFile(atPath: huge, contents: Data("{".utf8)))
        #expect(truncate(huge, 64 << 20 + 1) == 0)
        let run = try Self.symbolicate(huge)
        #expect(run.status == 1)
        #expect(run.stderr.contains("cohorly: \(huge): larger than 67108864 bytes, refused"), "\(run.stderr)")
        #expect(run.peakKB < 64 << 10, "\(run.peakKB) KiB")
    }
}
