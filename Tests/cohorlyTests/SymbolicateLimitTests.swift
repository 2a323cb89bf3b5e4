import Foundation
import Testing

/// `cohorly symbolicate` symbolicates at most 100 frames per thread and 100 threads, saying so, so its memory
/// stays bounded whatever the report holds (a hand-made report with a million frames took 2.4 GB).
@Suite struct SymbolicateLimitTests {
    /// A report whose crashed thread has `frames` frames and which has `threads` other threads of 3 frames.
    static func report(frames: Int, threads: Int) -> String {
        let addresses = (0..<frames).map { "\"0x\(String(0x401000 + $0 * 16, radix: 16))\"" }.joined(separator: ",")
        let others = (0..<threads).map { #"{"tid":\#(100 + $0),"frames":["0x401000","0x401010","0x401020"]}"# }
        return #"{"format":"cohorly-crash/1","signal":{"number":11,"name":"SIGSEGV","code":1,"address":"0x0"},"#
            + #""crashed_thread":{"tid":7,"name":"main","crashed":true,"frames":[\#(addresses)]},"#
            + #""threads":[\#(others.joined(separator: ","))]}"#
    }

    @Test func aThreadOfAHundredThousandFramesIsCutToTheRecordersCapAndSaysSo() throws {
        let path = try SymbolicateCommandTests.temporary("huge-report.json", Self.report(frames: 100_000, threads: 150))
        let result = try CLI.run(["symbolicate", "--json", path])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let threads = try #require(object["threads"] as? [[String: Any]])
        #expect(threads.count == 100)
        #expect((threads.first?["frames"] as? [Any])?.count == 100)
        #expect(threads.first?["truncated"] as? Bool == true)
        #expect(result.stderr.contains("thread 7: 100000 frames, the first 100 are symbolicated"), "\(result.stderr)")
        #expect(result.stderr.contains("151 threads: 100 are symbolicated"), "\(result.stderr)")
        let text = try CLI.run(["symbolicate", path])
        #expect(text.status == 0)
        #expect(text.stdout.contains("(truncated)"))
    }
}
