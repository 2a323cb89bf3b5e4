import CohorlyCollector
import Foundation
import Testing

/// `crashes list` is in crash-time order, newest first — not in the order crashes arrived (a crash arrives at the
/// next launch, so an old one often arrives last) — and says when each was received.
@Suite struct CrashOrderTests {
    static func crash(_ id: String, time: Int) -> String {
        event("$exception", insertId: id, ["time": .int(time), "$exception_level": "fatal"])
    }

    @Test func crashesAreListedNewestCrashTimeFirst() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        // Arrival order a, b, c, d; crash times 1, 3, 2 and 3 seconds.
        for (id, time) in [("a", 1_700_000_001_000), ("b", 1_700_000_003_000), ("c", 1_700_000_002_000)] {
            #expect(send(collector, "/track", body: Self.crash(id, time: time)).status == 200)
        }
        #expect(send(collector, "/track", body: Self.crash("d", time: 1_700_000_003_000)).status == 200)
        let listed = send(collector, "GET", "/api/crashes").body?["crashes"]?.arrayValue ?? []
        // One time: the one received last first.
        #expect(listed.map { $0["insert_id"]?.stringValue } == ["d", "b", "c", "a"])
        #expect(listed.allSatisfy { ($0["received_at"]?.intValue ?? 0) > 1_700_000_003_000 })

        let text = try await CLITests.run(["crashes", "list", "--host", host])
        let rows = text.output.split(separator: "\n").dropFirst().map { String($0.prefix(24)) }
        #expect(
            rows == [
                "2023-11-14T22:13:23.000Z", "2023-11-14T22:13:23.000Z", "2023-11-14T22:13:22.000Z",
                "2023-11-14T22:13:21.000Z",
            ], "\(text.output)")
        let shown = try await CLITests.run(["crashes", "show", "c", "--host", host])
        #expect(shown.output.contains("\nTime: 2023-11-14T22:13:22.000Z\nReceived: "), "\(shown.output)")

        // Pages continue after a row in the same order, across rows of one time.
        var query = EventQuery(event: "$exception", limit: 2, newestFirst: true)
        query.byTime = true
        let first = try collector.store.events(matching: query)
        #expect(first.map(\.insertId) == ["d", "b"])
        query.afterId = first.last?.id
        #expect(try collector.store.events(matching: query).map(\.insertId) == ["c", "a"])
        query.afterId = first.first?.id
        #expect(try collector.store.events(matching: query).map(\.insertId) == ["b", "c"])
    }
}
