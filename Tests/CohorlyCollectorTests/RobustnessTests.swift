import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// Bad requests get a clear 4xx and the server keeps serving.
@Suite struct RobustnessTests {
    @Test func badRequestsGetClearErrors() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let malformed = send(collector, "/track", body: #"{"event":"x","#)
        #expect(malformed.status == 400)
        #expect(malformed.body == ["status": 0, "error": "invalid json"])
        #expect(send(collector, "/track", body: String(repeating: "[", count: 100_000)).status == 400)
        #expect(send(collector, "/track", body: "").status == 400)
        #expect(send(collector, "/track", body: "\"just a string\"").status == 400)
        let xml = send(
            collector, "/track", body: "<x/>", headers: [("Content-Type", "text/xml"), ("X-Cohorly-Token", "t1")])
        #expect(xml.status == 415)
        #expect(send(collector, "GET", "/track", headers: []).status == 405)
        #expect(send(collector, "GET", "/nope", headers: []).status == 404)
        #expect(
            sendBytes(
                collector, "/track", body: [0xFF, 0xFE, 0x00, 0x7B], headers: [("Content-Type", "application/json")]
            ).status == 400)
        #expect(send(collector, "GET", "/health", headers: []).status == 200)
    }

    @Test func compressedBodiesAreRefusedWithoutInflating() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        // A gzip stream of 10 MB of zeros: never inflated, refused by its encoding.
        let bomb = try gzip(Array(repeating: 0, count: 10 << 20))
        let reply = sendBytes(
            collector, "/track", body: bomb,
            headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("X-Cohorly-Token", "t1")])
        #expect(reply.status == 415)
        #expect(reply.body?["error"]?.stringValue?.contains("gzip") == true)
    }

    @Test func hugeHeadersAndBodiesGet4xxAndTheServerLivesOn() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let huge = send(
            collector, "/track", body: event(),
            headers: [("Content-Type", "application/json"), ("X-Filler", String(repeating: "h", count: 200_000))])
        #expect((400..<500).contains(huge.status))
        let bigBody = Array(repeating: UInt8(ascii: " "), count: 8 << 20)
        let reply = sendBytes(collector, "/track", body: bigBody, headers: [("Content-Type", "application/json")])
        #expect(reply.status == 413)
        #expect(send(collector, "/track", body: event()).status == 200)
    }

    @Test func faultsAreInjectedOverHTTP() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let added = send(collector, "/admin/faults", body: #"{"count":2,"status":503,"retry_after":"7"}"#, headers: [])
        #expect(added.body == ["status": 1, "queued": 2])
        #expect(send(collector, "GET", "/admin/faults", headers: []).body?["faults"]?.arrayValue?.count == 2)
        for _ in 0..<2 {
            let reply = send(collector, "/track", body: event())
            #expect(reply.status == 503)
            #expect(reply.retryAfter == 7)
        }
        #expect(send(collector, "/track", body: event()).status == 200)
        _ = send(collector, "/admin/faults", body: #"{"count":1,"drop_connection":true}"#, headers: [])
        #expect(send(collector, "/track", body: event()).status == 0)  // no answer at all
        _ = send(collector, "/admin/faults", body: #"{"count":3,"status":500}"#, headers: [])
        #expect(send(collector, "DELETE", "/admin/faults", headers: []).status == 200)
        #expect(send(collector, "/track", body: event()).status == 200)
        #expect(send(collector, "/admin/faults", body: "nope", headers: []).status == 400)
    }

    /// A fault's rate-limit header value is `rate_limits` on the admin endpoint, and still read under its former
    /// name, `sentry_rate_limits` (scripts written before keep working); both list back as `rate_limits`.
    @Test func aFaultsRateLimitsAreReadUnderTheNeutralAndTheFormerName() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        for key in ["rate_limits", "sentry_rate_limits"] {
            let body = #"{"count":1,"\#(key)":"60:error:project"}"#
            #expect(send(collector, "/admin/faults", body: body, headers: []).status == 200)
        }
        let listed = send(collector, "GET", "/admin/faults", headers: []).body?["faults"]?.arrayValue ?? []
        #expect(listed.map { $0["rate_limits"]?.stringValue } == ["60:error:project", "60:error:project"])
        #expect(listed.allSatisfy { $0["sentry_rate_limits"] == nil })
        let tooLong = #"{"rate_limits":"\#(String(repeating: "x", count: 2049))"}"#
        #expect(send(collector, "/admin/faults", body: tooLong, headers: []).status == 400)
    }

    @Test func theOptionalRateLimitAnswers429WithRetryAfter() throws {
        let collector = try startCollector { $0.rateLimit = .init(requests: 3, window: 60) }
        defer { collector.stop() }
        for _ in 0..<2 { #expect(send(collector, "/track", body: event()).status == 200) }
        #expect(send(collector, "/engage", body: #"{"distinct_id":"u","$set":{"a":1}}"#).status == 200)
        let limited = send(collector, "/track", body: event())
        #expect(limited.status == 429)
        #expect(limited.body == ["status": 0, "error": "rate limited"])
        #expect(limited.retryAfter.map { $0 > 0 && $0 <= 60 } == true)
        #expect(send(collector, "/alias", body: #"{"alias":"a","distinct_id":"u"}"#).status == 200)
        #expect(send(collector, "GET", "/api/events", headers: []).status == 200)
        #expect(try collector.store.eventCount() == 2)
        #expect(CollectorConfiguration.RateLimit("100/10") == .cohorly)
        #expect(CollectorConfiguration.RateLimit("100") == nil)
    }

    @Test func theReadAPIFiltersAndTheAdminTokenGuardsIt() throws {
        let collector = try startCollector { $0.adminToken = "admin" }
        defer { collector.stop() }
        _ = send(
            collector, "/track",
            body: "[\(event("a", insertId: "1")),\(event("b", insertId: "2")),\(event("a", insertId: "3"))]")
        #expect(send(collector, "GET", "/api/events", headers: []).status == 401)
        #expect(send(collector, "/admin/faults", body: #"{"status":500}"#, headers: []).status == 401)
        let auth = [("Authorization", "Bearer admin")]
        let all = send(collector, "GET", "/api/events", headers: auth)
        #expect(all.body?["count"] == 3)
        let filtered = send(collector, "GET", "/api/events?event=a&limit=1", headers: auth)
        #expect(filtered.body?["events"]?.arrayValue?.compactMap { $0["insert_id"]?.stringValue } == ["1"])
        #expect(filtered.body?["total"] == 3)
        let after = send(collector, "GET", "/api/events?after=1", headers: auth)
        #expect(after.body?["events"]?.arrayValue?.count == 2)
        // Ingestion stays open to project tokens.
        #expect(send(collector, "/track", body: event()).status == 200)
    }
}

/// gzip-compresses `bytes` with the system gzip tool.
func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
    let directory = temporaryDirectory()
    let input = directory.appendingPathComponent("bomb-\(UUID().uuidString)")
    try Data(bytes).write(to: input)
    defer { try? FileManager.default.removeItem(at: input.appendingPathExtension("gz")) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/gzip")
    process.arguments = ["-9", input.path]
    try process.run()
    process.waitUntilExit()
    return Array(try Data(contentsOf: input.appendingPathExtension("gz")))
}
