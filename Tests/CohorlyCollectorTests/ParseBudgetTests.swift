import CohorlyCompression
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlyPostHogIngestion

/// Memory follows what is kept: a body is measured before it is parsed, and parsed only when its tree fits the
/// server-wide budget (413 when it never could, 503 with Retry-After when the budget stays taken).
@Suite struct ParseBudgetTests {
    /// `{"junk":[{"a":1},{"a":1},…]}` with `count` tiny objects: small compressed, many values parsed.
    static func tiny(_ count: Int) -> CohorlyValue {
        .array(Array(repeating: ["a": 1], count: count))
    }

    @Test func aCompressedV1BodyOfTinyObjectsIsRefusedBeforeItIsParsed() throws {
        let collector = try startCollector {
            $0.tokens = ["v1-token"]
            $0.parseBudgetBytes = 16 << 20
        }
        defer { collector.stop() }
        let body = CaptureV1IngestionTests.body([
            CaptureV1IngestionTests.item(0, ["properties": ["junk": Self.tiny(400_000)]])
        ])
        let compressed = try #require(Gzip.compress(body))
        #expect(compressed.count < 200_000)
        let reply = sendBytes(
            collector, CaptureV1Ingestion.path, body: compressed,
            headers: CaptureV1IngestionTests.headers() + [("Content-Encoding", "gzip")])
        #expect(reply.status == 413, "\(reply.text.prefix(200))")
        #expect(reply.text.contains("too many JSON values"), "\(reply.text.prefix(200))")
        // Nothing stays taken; a normal batch goes through.
        let fine = sendBytes(
            collector, CaptureV1Ingestion.path, body: CaptureV1IngestionTests.body([CaptureV1IngestionTests.item(1)]),
            headers: CaptureV1IngestionTests.headers())
        #expect(fine.status == 200, "\(fine.text)")
    }

    @Test func aTrackBodyOfTinyObjectsIsRefusedWithTheReason() throws {
        let collector = try startCollector { $0.parseBudgetBytes = 4 << 20 }
        defer { collector.stop() }
        let reply = send(collector, "/track", body: event("e", ["junk": Self.tiny(100_000)]))
        #expect(reply.status == 413, "\(reply.text.prefix(200))")
        #expect(reply.text.contains("too many JSON values"))
        #expect(send(collector, "/track", body: event()).status == 200)
    }

    @Test func aSentryEventItemOfTinyObjectsIsRefusedAndOneNestedTooDeepToo() throws {
        let collector = try startCollector { $0.parseBudgetBytes = 4 << 20 }
        defer { collector.stop() }
        typealias E = SentryEnvelopes
        let tiny = E.envelope([:], [("event", E.json(["extra": Self.tiny(60_000)]))])
        let reply = sendBytes(collector, E.path, body: tiny, headers: E.headers())
        #expect(reply.status == 413, "\(reply.text.prefix(200))")
        #expect(reply.text.contains("too many JSON values"))
        let deep = E.envelope([:], [("event", E.json(["extra": PoisonEventTests.deep(300)]))])
        let refused = sendBytes(collector, E.path, body: deep, headers: E.headers())
        #expect(refused.status == 400, "\(refused.text.prefix(200))")
        #expect(refused.text.contains("nests deeper than 100 levels"))
    }

    @Test func aBudgetTakenForLongerThanTheWaitAnswersBusy() {
        let budget = ParseBudget(capacity: 1 << 20, wait: 0.05)
        #expect(budget.acquire(1 << 20))
        let body = Array(#"{"a":[1,2,3]}"#.utf8)
        guard case .failure(.busy) = budget.parse(body, { _ in () }) else {
            Issue.record("parsed with the budget taken")
            return
        }
        budget.release(1 << 20)
        guard case .success(let value) = budget.parse(body, { $0 }) else {
            Issue.record("not parsed with the budget free")
            return
        }
        #expect(value["a"]?.arrayValue?.count == 3)
        #expect(budget.inUse == 0)
    }

    /// The measuring pass accepts exactly what the parser accepts, and counts what it would build.
    @Test(arguments: [
        (#"{"a":[1,2,{"b":null}],"c":"x\"y"}"#, JSONShape(values: 10, depth: 3)),
        ("[]", JSONShape(values: 1, depth: 1)), ("[[],{}]", JSONShape(values: 3, depth: 2)),
        (#""\u00e9\ud83d\ude00""#, JSONShape(values: 1, depth: 0)), ("-0.5e3", JSONShape(values: 1, depth: 0)),
    ])
    func theShapeOfValidJSON(_ text: String, _ shape: JSONShape) {
        #expect(JSONShape.measure(Array(text.utf8)) == shape)
        #expect(CohorlyValue(json: text) != nil)
    }

    @Test(arguments: [
        "", "{", "[1,]", #"{"a"}"#, #"{"a":1,}"#, "[1 2]", "01", "1.", #""\x""#, "\"\u{01}\"", "[1]x", "tru", "{1:2}",
        String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
    ])
    func invalidJSONHasNoShape(_ text: String) {
        #expect(JSONShape.measure(Array(text.utf8)) == nil)
        #expect(CohorlyValue(json: text) == nil)
    }
}
