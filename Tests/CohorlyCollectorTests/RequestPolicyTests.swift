import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// What a web page or another local user can send to a collector on 127.0.0.1 is refused before it is routed.
@Suite struct RequestPolicyTests {
    @Test func aForeignHostIsRefusedOnEveryRoute() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let port = collector.port
        for path in ["/health", "/api/events", "/buildid/0011223344556677/debuginfo", "/admin/faults"] {
            for host in ["evil.example", "evil.example:\(port)", "127.0.0.1:\(port &+ 1)", "127.0.0.2:\(port)"] {
                let reply = send(collector, "GET", path, headers: [("Host", host)])
                #expect(reply.status == 421, "\(path) Host \(host): \(reply.text)")
            }
        }
        for host in ["localhost:\(port)", "LOCALHOST", "127.0.0.1:\(port)", "127.0.0.1"] {
            #expect(send(collector, "GET", "/health", headers: [("Host", host)]).status == 200, "\(host)")
        }
        #expect(
            send(collector, "/track", body: event(), headers: jsonHeaders + [("Host", "rebound.example")]).status == 421
        )
        #expect(try collector.store.eventCount() == 0)
    }

    @Test func configuredHostNamesAreAccepted() throws {
        let collector = try startCollector { $0.allowedHosts = ["collector"] }
        defer { collector.stop() }
        #expect(send(collector, "GET", "/health", headers: [("Host", "collector:\(collector.port)")]).status == 200)
        #expect(send(collector, "GET", "/health", headers: [("Host", "other:\(collector.port)")]).status == 421)
    }

    @Test func aForeignOriginIsRefusedOnTheAPIAdminAndUploads() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let own = "http://127.0.0.1:\(collector.port)"
        for origin in ["http://evil.example", "null", "https://127.0.0.1:\(collector.port)", "http://localhost:1"] {
            let origin = [("Origin", origin)]
            #expect(send(collector, "GET", "/api/events", headers: origin).status == 403, "\(origin)")
            #expect(send(collector, "/admin/faults", body: #"{"status":500}"#, headers: origin).status == 403)
            #expect(
                send(collector, "PUT", "/api/debug-files/0011223344556677/debuginfo", body: "x", headers: origin).status
                    == 403)
            #expect(send(collector, "/api/debug-files/check", body: "{}", headers: origin).status == 403)
        }
        #expect(collector.faults.pending.isEmpty)
        #expect(send(collector, "GET", "/api/events", headers: [("Origin", own)]).status == 200)
        #expect(
            send(collector, "GET", "/api/events", headers: [("Origin", "http://localhost:\(collector.port)")]).status
                == 200)
    }

    @Test func ingestionTakesOnlyJSON() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        // What a page may POST cross-site without a preflight: text/plain, forms, multipart.
        for type in [
            "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x", "application/jsonp",
        ] {
            let reply = send(
                collector, "/track", body: event(), headers: [("Content-Type", type), ("X-Cohorly-Token", "t1")])
            #expect(reply.status == 415, "\(type)")
        }
        #expect(send(collector, "/track", body: event(), headers: [("X-Cohorly-Token", "t1")]).status == 415)
        let json = [("Content-Type", "Application/JSON; charset=utf-8"), ("X-Cohorly-Token", "t1")]
        #expect(send(collector, "/track", body: event(), headers: json).status == 200)
        #expect(try collector.store.eventCount() == 1)
        // The media type is read without the blanks around it (a header's own are already trimmed).
        let blanks = [("Content-Type", "application/json\t ; charset=utf-8"), ("X-Cohorly-Token", "t1")]
        #expect(send(collector, "/track", body: event(), headers: blanks).status == 200)
        #expect(Router.mediaType(" \tApplication/JSON\t ") == "application/json")
        #expect(Router.mediaType("text/plain ") == "text/plain")
    }

    @Test func theSecretIsCheckedWithAnyCaseOfTheSchemeAndNeverEmpty() throws {
        let collector = try startCollector { $0.adminToken = "s3cret" }
        defer { collector.stop() }
        for good in ["Bearer s3cret", "bearer s3cret", "BEARER  s3cret"] {
            #expect(send(collector, "GET", "/api/events", headers: [("Authorization", good)]).status == 200, "\(good)")
        }
        for bad in ["Bearer ", "Bearer", "Bearer s3cre", "Bearer s3cretX", "Basic s3cret", "s3cret", "Bearer S3CRET"] {
            let reply = send(collector, "GET", "/api/events", headers: [("Authorization", bad)])
            #expect(reply.status == 401, "\(bad)")
        }
        #expect(send(collector, "GET", "/api/events", headers: []).status == 401)
        #expect(throws: CollectorError.self) {
            try Collector(
                configuration: {
                    var c = CollectorConfiguration(); c.adminToken = ""; return c
                }())
        }
        #expect(Router.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!Router.constantTimeEqual(Array("abc".utf8), Array("abd".utf8)))
        #expect(!Router.constantTimeEqual(Array("abc".utf8), Array("abcd".utf8)))
        #expect(!Router.constantTimeEqual([], Array("a".utf8)))
    }

    @Test func anUploadWithoutTheSecretIsRefusedAndNothingIsStored() throws {
        let collector = try startCollector { $0.adminToken = "s3cret" }
        defer { collector.stop() }
        let body = [UInt8](repeating: 0, count: 8 << 20)
        let reply = sendBytes(
            collector, "/api/debug-files/0011223344556677/debuginfo", method: "PUT", body: body,
            headers: [("Content-Type", "application/octet-stream")])
        #expect(reply.status == 401)
        #expect(collector.debugFiles.statistics.bytesReceived == 0)
    }

    @Test func refusedRequestsAreLoggedWithoutTheSecret() throws {
        let lines = LogLines()
        let collector = try startCollector {
            $0.adminToken = "s3cret"
            $0.requestLog = .refused
            $0.logHandler = { lines.append($0) }
        }
        defer { collector.stop() }
        _ = send(collector, "GET", "/api/events?limit=5", headers: [("Authorization", "Bearer wrong-s3cret")])
        _ = send(collector, "GET", "/health\u{1b}[31m", headers: [])
        #expect(send(collector, "GET", "/api/events", headers: [("Authorization", "Bearer s3cret")]).status == 200)
        let logged = lines.all
        #expect(logged.count == 2)
        #expect(
            logged.first?.hasPrefix("cohorly: 401 GET /api/events from 127.0.0.1: missing or wrong credential") == true)
        #expect(logged.allSatisfy { !$0.contains("s3cret") && !$0.contains("limit=5") && !$0.contains("\u{1b}") })
    }

    @Test func everyRequestIsLoggedWhenAsked() throws {
        let lines = LogLines()
        let collector = try startCollector {
            $0.requestLog = .all
            $0.logHandler = { lines.append($0) }
        }
        defer { collector.stop() }
        #expect(send(collector, "/track", body: event()).status == 200)
        #expect(lines.all == ["cohorly: 200 POST /track from 127.0.0.1"])
    }
}

let jsonHeaders = [("Content-Type", "application/json"), ("X-Cohorly-Token", "t1")]

/// Log lines collected from the server's threads.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}
