import CohorlyCollector
import CohorlyCompression
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// `POST /i/v1/analytics/events` on the collector: PostHog's validation and answers (docs/posthog.md "The local
/// collector speaks capture V1 too").
@Suite struct CaptureV1IngestionTests {
    static let uuids = (0..<4).map { String(format: "0190a1b2-c3d4-4e5f-8a6b-%012x", $0) }

    static func headers(token: String = "v1-token") -> [(String, String)] {
        [
            ("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"), ("User-Agent", "test/1"),
            ("PostHog-Sdk-Info", "posthog-test/1.2.3"), ("PostHog-Attempt", "1"),
            ("PostHog-Request-Id", "0190a1b2-c3d4-7e5f-8a6b-000000000001"),
            ("PostHog-Request-Timestamp", "2026-11-30T10:00:00.000Z"),
        ]
    }

    static func item(_ index: Int, _ changes: Properties = [:]) -> CohorlyValue {
        var item: Properties = [
            "event": .string("e\(index)"), "uuid": .string(uuids[index]), "distinct_id": "user",
            "timestamp": "2026-11-30T09:00:00.000Z", "options": [:], "properties": ["n": .int(index)],
        ]
        item.merge(changes) { _, new in new }
        return .object(item)
    }

    static func body(_ items: [CohorlyValue]) -> [UInt8] {
        Array(CohorlyValue.object(["created_at": "2026-11-30T10:00:00.000Z", "batch": .array(items)]).jsonString.utf8)
    }

    final class Server {
        let collector: Collector
        init() throws {
            var configuration = CollectorConfiguration()
            configuration.tokens = ["v1-token"]
            collector = try Collector(configuration: configuration)
            try collector.start()
        }

        func post(_ body: [UInt8], headers: [(String, String)] = CaptureV1IngestionTests.headers())
            -> (Int, CohorlyValue?, [UInt8])
        {
            let request = TransportRequest(
                url: collector.baseURL.appendingPathComponent("i/v1/analytics/events"), headers: headers, body: body,
                timeout: 10, connectTimeout: 5)
            guard case .http(let status, _, let answer) = CurlTransport().send(request) else { return (0, nil, []) }
            return (status, CohorlyValue(bytes: answer), answer)
        }
    }

    @Test func aGoodBatchIsStoredLikeTrackEventsWithPerEventResults() throws {
        let server = try Server()
        defer { server.collector.stop() }
        let (status, answer, _) = server.post(
            Self.body([
                Self.item(0), Self.item(1, ["distinct_id": "anonymous"]), Self.item(2, ["event": ""]),
                Self.item(3, ["properties": "text"]),
            ]))
        #expect(status == 200)
        let results = try #require(answer?["results"]?.objectValue)
        #expect(results[Self.uuids[0]] == ["result": "ok"])
        #expect(results[Self.uuids[1]] == ["result": "warning", "details": "person_processing_disabled"])
        #expect(results[Self.uuids[2]] == ["result": "drop", "details": "invalid_event_name"])
        #expect(results[Self.uuids[3]] == ["result": "drop", "details": "invalid_properties"])
        let stored = try server.collector.store.events()
        #expect(stored.map(\.event) == ["e0", "e1"])
        #expect(stored[0].insertId == Self.uuids[0])
        #expect(stored[0].distinctId == "user")
        #expect(stored[0].time == 1_796_029_200_000)
        let properties = try #require(CohorlyValue(json: stored[0].propertiesJSON))
        #expect(properties["n"] == 0)
        #expect(properties["$lib"] == "posthog-test")
        #expect(properties["$lib_version"] == "1.2.3")
        #expect(properties["$insert_id"] == .string(Self.uuids[0]))
        // A resend (same uuid) is answered ok and stored once.
        #expect(server.post(Self.body([Self.item(0)])).0 == 200)
        #expect(try server.collector.store.eventCount() == 2)
    }

    @Test func badTimestampsDropOnlyTheirEvent() throws {
        let server = try Server()
        defer { server.collector.stop() }
        let (status, answer, _) = server.post(Self.body([Self.item(0, ["timestamp": "soon"]), Self.item(1)]))
        #expect(status == 200)
        #expect(answer?["results"]?[Self.uuids[0]] == ["result": "drop", "details": "invalid_timestamp"])
        #expect(answer?["results"]?[Self.uuids[1]] == ["result": "ok"])
    }

    @Test func gzipBodiesAreInflated() throws {
        let server = try Server()
        defer { server.collector.stop() }
        let compressed = try #require(Gzip.compress(Self.body([Self.item(0)])))
        let (status, _, _) = server.post(compressed, headers: Self.headers() + [("Content-Encoding", "gzip")])
        #expect(status == 200)
        #expect(try server.collector.store.eventCount() == 1)
    }

    @Test func wholeBatchErrorsCarryPostHogsTags() throws {
        let server = try Server()
        defer { server.collector.stop() }
        let good = Self.body([Self.item(0)])
        func without(_ name: String) -> [(String, String)] { Self.headers().filter { $0.0 != name } }
        func replacing(_ name: String, _ value: String) -> [(String, String)] { without(name) + [(name, value)] }
        let cases: [(String, [UInt8], [(String, String)], Int, String)] = [
            ("no auth", good, without("Authorization"), 401, "missing_authorization"),
            ("unknown token", good, Self.headers(token: "other"), 401, "invalid_api_token"),
            ("personal key", good, Self.headers(token: "phx_abc"), 401, "invalid_api_token"),
            ("basic auth", good, replacing("Authorization", "Basic dXNlcg=="), 400, "invalid_header_value"),
            // Refused by the collector's request screen before the body is read, in PostHog's words.
            ("content type", good, replacing("Content-Type", "text/plain"), 415, "unsupported_content_type"),
            ("no user agent", good, without("User-Agent"), 400, "missing_required_headers"),
            ("no sdk info", good, without("PostHog-Sdk-Info"), 400, "missing_required_headers"),
            ("attempt 0", good, replacing("PostHog-Attempt", "0"), 400, "invalid_header_value"),
            ("request id", good, replacing("PostHog-Request-Id", "abc"), 400, "invalid_header_value"),
            ("request time", good, replacing("PostHog-Request-Timestamp", "now"), 400, "invalid_header_value"),
            ("brotli", good, Self.headers() + [("Content-Encoding", "br")], 415, "unsupported_encoding"),
            ("corrupt gzip", good, Self.headers() + [("Content-Encoding", "gzip")], 400, "request_decoding_error"),
            ("empty body", [], Self.headers(), 400, "empty_body"),
            ("not json", Array("{".utf8), Self.headers(), 400, "request_parsing_error"),
            ("empty batch", Self.body([]), Self.headers(), 400, "empty_batch"),
            ("no uuid", Self.body([Self.item(0, ["uuid": nil])]), Self.headers(), 400, "missing_event_uuid"),
            ("bad uuid", Self.body([Self.item(0, ["uuid": "x"])]), Self.headers(), 400, "invalid_event_uuid"),
            ("duplicate", Self.body([Self.item(0), Self.item(0)]), Self.headers(), 400, "duplicate_event_uuid"),
            ("too large", Array(repeating: 32, count: 2 << 20), Self.headers(), 413, "payload_too_large"),
        ]
        for (name, body, headers, status, tag) in cases {
            let (answered, answer, _) = server.post(body, headers: headers)
            #expect(answered == status, "\(name)")
            if !tag.isEmpty { #expect(answer?["error"]?.stringValue == tag, "\(name)") }
        }
        #expect(try server.collector.store.eventCount() == 0)  // a rejected batch stores nothing
    }
}
