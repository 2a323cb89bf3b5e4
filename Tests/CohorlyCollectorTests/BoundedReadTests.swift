import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// The read API answers in bounded pages: however big the stored events, one answer holds about 8 MiB of them
/// and says where the next page starts.
@Suite struct BoundedReadTests {
    /// `count` events of about `size` bytes each, inserted over HTTP.
    private func fill(_ collector: Collector, name: String, count: Int, size: Int) {
        let filler = String(repeating: "x", count: size)
        for index in 0..<count {
            let body = event(name, insertId: "\(name)-\(index)", ["filler": .string(filler)])
            #expect(send(collector, "/track", body: body).status == 200)
        }
    }

    @Test func bigEventsComeInPagesThatTogetherHoldEveryEvent() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        fill(collector, name: "big", count: 20, size: 900_000)
        var seen: [String] = []
        var after: Int?
        var pages = 0
        repeat {
            let reply = send(collector, "GET", "/api/events" + (after.map { "?after=\($0)" } ?? ""), headers: [])
            #expect(reply.status == 200)
            #expect(reply.text.utf8.count <= 9 << 20)
            seen += reply.body?["events"]?.arrayValue?.compactMap { $0["insert_id"]?.stringValue } ?? []
            after = reply.body?["next_after"]?.intValue
            #expect(reply.body?["truncated"] == .bool(after != nil))
            #expect(reply.body?["total"] == 20)
            pages += 1
        } while after != nil && pages < 10
        #expect(pages >= 3)
        #expect(seen == (0..<20).map { "big-\($0)" })
    }

    @Test func crashesAreListedNewestFirstPageByPage() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        fill(collector, name: "$exception", count: 4, size: 10)
        fill(collector, name: "other", count: 2, size: 10)
        let one = send(collector, "GET", "/api/crashes?limit=1", headers: [])
        #expect(one.body?["crashes"]?.arrayValue?.compactMap { $0["insert_id"]?.stringValue } == ["$exception-3"])
        let all = send(collector, "GET", "/api/crashes", headers: [])
        let ids = all.body?["crashes"]?.arrayValue?.compactMap { $0["insert_id"]?.stringValue }
        #expect(ids == ["$exception-3", "$exception-2", "$exception-1", "$exception-0"])
        let older = send(collector, "GET", "/api/crashes?after=3", headers: [])
        #expect(
            older.body?["crashes"]?.arrayValue?.compactMap { $0["insert_id"]?.stringValue } == [
                "$exception-1", "$exception-0",
            ])
    }
}
