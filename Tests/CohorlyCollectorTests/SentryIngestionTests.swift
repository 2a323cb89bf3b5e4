import Cohorly
import CohorlyCompression
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlySentryIngestion

/// The collector's Sentry envelope route over loopback: crashes stored and shown like the other wires', sessions
/// stored and listed, Sentry's answers.
@Suite struct SentryIngestionTests {
    typealias E = SentryEnvelopes
    static let eventHex = "9ec79c33ec9942ab8353589fcb2e04dc"
    static let eventId = "9ec79c33-ec99-42ab-8353-589fcb2e04dc"
    static let sid = "0b7d3a4c-0a8b-4a5e-9a53-2c8f1b4e5d6f"

    func crashEnvelope(_ eventHex: String = eventHex, session: String? = "crashed") -> [UInt8] {
        var items: [(type: String, payload: [UInt8])] = [("event", E.json(E.crashEvent(eventId: eventHex)))]
        if let session { items.append(("session", E.json(E.session(Self.sid, status: session, errors: 1)))) }
        return E.envelope(
            ["event_id": .string(eventHex), "sent_at": "2026-12-01T10:00:01Z", "dsn": .string(E.dsn)], items)
    }

    func post(_ collector: Collector, _ body: [UInt8], headers: [(String, String)] = E.headers(), path: String = E.path)
        -> Reply
    {
        sendBytes(collector, path, body: body, headers: headers)
    }

    @Test func aCrashIsListedAndShownLikeTheOthersWithItsSession() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let reply = post(collector, crashEnvelope())
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.body?["id"]?.stringValue == Self.eventHex)

        let list = send(collector, "GET", "/api/crashes", headers: [])
        let crash = try #require(list.body?["crashes"]?.arrayValue?.first)
        #expect(crash["insert_id"]?.stringValue == Self.eventId)
        #expect(crash["level"]?.stringValue == "fatal")
        #expect(crash["mechanism"]?.stringValue == "signalhandler")
        #expect(crash["type"]?.stringValue == "SIGSEGV")
        #expect(crash["distinct_id"]?.stringValue == "user-1")
        #expect(crash["release"]?.stringValue == "app@1.0")
        #expect(crash["thread_name"]?.stringValue == "main")
        #expect(crash["time"]?.intValue == 1_796_119_200_250)

        let shown = send(collector, "GET", "/api/crashes/\(Self.eventId)", headers: [])
        #expect(shown.status == 200)
        #expect(shown.body?["dist"]?.stringValue == "7")
        #expect(shown.body?["arch"]?.stringValue == "x86_64")
        let threads = try #require(shown.body?["crash"]?["threads"]?.arrayValue)
        #expect(threads.count == 2)
        let frames = try #require(threads.first?["frames"]?.arrayValue)
        // Crash site first; the inlined call folded under its frame, innermost first: the device's names stand.
        #expect(frames.count == 2)
        #expect(
            frames[0]["symbols"]?.arrayValue?.map { $0["function"]?.stringValue } == ["App.poke(_:)", "App.crash()"])
        #expect(frames[1]["symbols"]?.arrayValue?.first?["function"]?.stringValue == "main")
        #expect(shown.body?["breadcrumbs"]?.arrayValue?.first?["timestamp"]?.stringValue == "2026-12-01T10:00:00.500Z")

        let sessions = send(collector, "GET", "/api/sessions", headers: [])
        let session = try #require(sessions.body?["sessions"]?.arrayValue?.first)
        #expect(session["sid"]?.stringValue == Self.sid)
        #expect(session["status"]?.stringValue == "crashed")
        #expect(session["errors"]?.intValue == 1)
        #expect(session["attrs"]?["release"]?.stringValue == "app@1.0")
    }

    /// A Sentry event's breadcrumbs are the stored model's, each with its `level`, `type`, `category` and `data`
    /// as sent, nothing of them beside the model; read back as today (a numeric timestamp as RFC 3339). One
    /// without `type` or `level` (the fixture's) is the model's too, those two marked absent.
    @Test func aSentryEventsBreadcrumbsAreTheStoredModels() throws {
        var event = E.crashEvent(eventId: Self.eventHex).objectValue ?? [:]
        event["breadcrumbs"] = E.typedBreadcrumbs
        let record = SentryEventRecord.newEvent(
            event, eventId: Self.eventId, token: E.key, projectId: E.projectId, now: 0)
        let crash = try #require(record.crash)
        #expect(crash.breadcrumbs.map(\.level) == ["warning", "error"])
        #expect(crash.breadcrumbs.map(\.type) == ["http", "error"])
        #expect(crash.breadcrumbs.map(\.category) == ["net", "app"])
        #expect(crash.breadcrumbs.first?.data == ["status_code": 500])
        #expect(crash.breadcrumbs.first?.timestampMs == 1_796_119_200_500)
        let prepared = record.prepared()
        let column = try #require(prepared.crashJSON)
        let stored = try #require(StoredCrash.crash(column))
        #expect(stored.breadcrumbs == crash.breadcrumbs)
        let besides = JSONValue(json: prepared.propertiesJSON)?.objectValue ?? [:]
        #expect(besides[CapturedException.breadcrumbsProperty] == nil)
        let readBack = StoredCrash.properties(crash: column, properties: prepared.propertiesJSON)
        #expect(
            readBack?[CapturedException.breadcrumbsProperty]
                == record.properties?[CapturedException.breadcrumbsProperty])
        #expect(
            readBack?[CapturedException.breadcrumbsProperty]?.arrayValue?.first?["timestamp"]
                == "2026-12-01T10:00:00.500Z")

        let fixture = SentryEventRecord.newEvent(
            E.crashEvent(eventId: Self.eventHex).objectValue ?? [:], eventId: Self.eventId, token: E.key,
            projectId: E.projectId, now: 0)
        #expect(fixture.crash?.breadcrumbs.map(\.message) == ["Checkout"])
        #expect(fixture.crash?.breadcrumbDifferences?.first?.absent == ["level", "type"])
        #expect(fixture.crash?.properties[CapturedException.breadcrumbsProperty] == nil)
    }

    /// The event id is the crash's `$insert_id`: sent again, or over the Cohorly wire with the same token, it is
    /// still one crash.
    @Test func aCrashIsDedupedByEventIdAcrossResendsAndWires() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        #expect(post(collector, crashEnvelope(session: nil)).status == 200)
        // The dashed form in the header this time: the same id.
        #expect(post(collector, crashEnvelope(Self.eventId, session: nil)).status == 200)
        #expect(send(collector, "/track", body: event("$exception", insertId: Self.eventId)).status == 200)
        let crashes = send(collector, "GET", "/api/crashes", headers: []).body?["crashes"]?.arrayValue
        #expect(crashes?.count == 1)
        #expect(crashes?.first?["mechanism"]?.stringValue == "signalhandler")
    }

    @Test func theKeyIsCheckedLikeAProjectToken() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let anonymous = E.envelope([:], [("session", E.json(E.session(Self.sid, status: "ok", initial: true)))])
        let none = post(collector, anonymous, headers: E.headers(key: nil))
        #expect(none.status == 403)
        #expect(none.body?["detail"]?.stringValue == "missing authorization information")
        #expect(post(collector, anonymous, headers: E.headers(key: "wrong")).status == 403)
        #expect(post(collector, anonymous, headers: E.headers(key: nil), path: E.path + "?sentry_key=t2").status == 200)
        let withDSN = E.envelope(
            ["dsn": "http://t1@localhost/42"], [("session", E.json(E.session(Self.sid, status: "exited")))])
        #expect(post(collector, withDSN, headers: E.headers(key: nil)).status == 200)
        #expect(send(collector, "GET", "/api/sessions", headers: []).body?["count"]?.intValue == 2)
    }

    @Test func sentryAnswers() throws {
        let collector = try startCollector { $0.maxBodyBytes = 256 << 10 }
        defer { collector.stop() }
        let framing = post(collector, Array("{}\n{\"type\":\"event\",\"length\":99}\n{}\n".utf8))
        #expect(framing.status == 400)
        #expect(framing.body?["detail"]?.stringValue?.contains("runs past the end") == true)
        let sentAt = "\"sent_at\":\"2026-12-01T10:00:00Z\""
        #expect(post(collector, Array("{\(sentAt),\(sentAt)}\n".utf8)).status == 400)
        let two = E.envelope([:], [("event", E.json([:])), ("event", E.json([:]))])
        #expect(post(collector, two).body?["detail"]?.stringValue?.contains("duplicate item") == true)
        #expect(post(collector, E.envelope([:], [("event", Array("[1]".utf8))])).status == 400)
        // An envelope without an event: `{}`; unknown item types are skipped.
        let other = post(collector, E.envelope([:], [("client_report", E.json([:])), ("profile", [1, 2, 3])]))
        #expect(other.status == 200)
        #expect(other.body == [:])
        // 413: the body over the limit; an event item over 1 MiB (it fits the body gzipped).
        #expect(post(collector, [UInt8](repeating: 0x20, count: 300 << 10)).status == 413)
        let big: CohorlyValue = ["message": .string(String(repeating: "x", count: 1 << 20))]
        let gzipped = try E.envelope(["event_id": .string(Self.eventHex)], [("event", E.json(big))])
            .withUnsafeBytes { try ZlibStream.gzip($0) }
        let tooBig = post(collector, gzipped, headers: E.headers(extra: [("Content-Encoding", "gzip")]))
        #expect(tooBig.status == 413, "\(tooBig.text)")
        let sessions = (0...100).map { _ in (type: "session", payload: E.json(E.session(Self.sid, status: "ok"))) }
        #expect(post(collector, E.envelope([:], sessions)).status == 413)
        // A corrupt gzip body: 400.
        #expect(
            post(collector, [0x1f, 0x8b, 1, 2, 3], headers: E.headers(extra: [("Content-Encoding", "gzip")])).status
                == 400)
        #expect(send(collector, "GET", E.path, headers: E.headers()).status == 405)
    }

    @Test func aGzipBodyIsInflated() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let body = try crashEnvelope().withUnsafeBytes { try ZlibStream.gzip($0) }
        #expect(post(collector, body, headers: E.headers(extra: [("Content-Encoding", "gzip")])).status == 200)
        #expect(send(collector, "GET", "/api/crashes", headers: []).body?["count"]?.intValue == 1)
    }

    @Test func anInvalidSessionIsDroppedTheRestKept() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        var noRelease = E.session(Self.sid, status: "ok").objectValue ?? [:]
        noRelease["attrs"] = [:]
        var badStatus = E.session(Self.sid, status: "ok").objectValue ?? [:]
        badStatus["status"] = "fine"
        let body = E.envelope(
            [:],
            [
                ("session", E.json(.object(noRelease))), ("session", E.json(.object(badStatus))),
                ("session", Array("{".utf8)), ("session", E.json(E.session(Self.sid, status: "exited"))),
            ])
        #expect(post(collector, body).status == 200)
        let sessions = send(collector, "GET", "/api/sessions", headers: []).body?["sessions"]?.arrayValue
        #expect(sessions?.map { $0["status"]?.stringValue } == ["exited"])
    }

    @Test func rateLimitsAndFaultsAnswerTheSentryWay() throws {
        let collector = try startCollector { $0.rateLimit = .init(requests: 1, window: 60) }
        defer { collector.stop() }
        let body = E.envelope([:], [("session", E.json(E.session(Self.sid, status: "ok")))])
        collector.injectFault(Fault(path: E.path, rateLimits: "60:session:project"))
        let first = sendBytes(collector, E.path, body: body, headers: E.headers())
        #expect(first.status == 200)
        let limited = post(collector, body)
        #expect(limited.status == 429)
        #expect(limited.retryAfter ?? 0 > 0)
        #expect(limited.body?["detail"]?.stringValue == "rate limited")
        #expect(collector.appliedFaultCount == 1)
    }

    /// The rate-limit header rides on a real answer (curl's reply here keeps only Retry-After, so the header is
    /// read from the route's answer directly).
    @Test func aFaultsRateLimitHeaderRidesOnTheRealAnswer() throws {
        let store = try CollectorStore(directory: nil)
        var configuration = CollectorConfiguration()
        configuration.tokens = ["t1"]
        let faults = FaultInjector()
        let route = SentryIngestion(store: store, configuration: configuration, faults: faults, rateLimiter: nil)
        let body = E.envelope([:], [("session", E.json(E.session(Self.sid, status: "ok")))])
        let request = HTTPRequest(
            method: "POST", path: E.path,
            headers: Dictionary(uniqueKeysWithValues: E.headers().map { ($0.0.lowercased(), $0.1) }),
            body: body)
        faults.add(Fault(rateLimits: "60:session:project"), count: 1)
        let answer = try #require(route.handle(request, projectId: "42"))
        #expect(answer.status == 200)
        #expect(answer.headers.contains { $0 == ("X-Sentry-Rate-Limits", "60:session:project") })
        faults.add(Fault(status: 429, retryAfter: "5", rateLimits: "5::organization"), count: 1)
        let refused = try #require(route.handle(request, projectId: "42"))
        #expect(refused.status == 429)
        #expect(refused.headers.contains { $0 == ("X-Sentry-Rate-Limits", "5::organization") })
        #expect(JSONValue(bytes: refused.body)?["detail"]?.stringValue == "injected fault")
        #expect(try store.records(kind: SentrySession.kind).count == 1)
    }

    @Test func theRouteKeepsTheCollectorsRules() throws {
        let collector = try startCollector { $0.adminToken = "secret" }
        defer { collector.stop() }
        let body = E.envelope([:], [("session", E.json(E.session(Self.sid, status: "ok")))])
        // An ingestion route: no admin secret needed; but the envelope type, and no foreign Origin.
        #expect(post(collector, body).status == 200)
        let plain = post(collector, body, headers: [("Content-Type", "text/plain")] + E.headers().dropFirst())
        #expect(plain.status == 415)
        #expect(post(collector, body, headers: E.headers(extra: [("Origin", "http://evil.example")])).status == 403)
        #expect(post(collector, body, headers: E.headers(extra: [("Host", "evil.example")])).status == 421)
        // Reading the sessions is the read API's: it needs the secret.
        #expect(send(collector, "GET", "/api/sessions", headers: []).status == 401)
    }

    /// Raw frames (no names from the device) are symbolicated by the collector's debug files, as for `$exception`.
    @Test func rawFramesAreSymbolicatedFromDebugFiles() throws {
        let program = try SplitProgram.get()
        let symbols = try SplitProgram.run("/usr/bin/nm", [program.full])
        let line = try #require(symbols.split(separator: "\n").first { $0.hasSuffix(" T main") })
        let main = try #require(UInt64(line.split(separator: " ")[0], radix: 16))
        let base: UInt64 = 0x7f00_0000_0000
        let hex = { (value: UInt64) in CohorlyValue.string("0x" + String(value, radix: 16)) }
        let event: CohorlyValue = [
            "event_id": .string(Self.eventHex), "level": "fatal", "platform": "native",
            "exception": [
                "values": [
                    [
                        "type": "SIGSEGV", "mechanism": ["type": "signalhandler", "handled": false],
                        "stacktrace": [
                            "frames": [["instruction_addr": hex(base + main + 4), "image_addr": hex(base)]]
                        ],
                    ]
                ]
            ],
            "debug_meta": [
                "images": [
                    [
                        "type": "elf", "code_file": "/elsewhere/prog", "code_id": .string(program.buildId),
                        "image_addr": hex(base), "image_size": 1_048_576,
                    ]
                ]
            ],
        ]
        let collector = try startCollector { $0.extraDebugFileDirectories = [program.directory] }
        defer { collector.stop() }
        #expect(post(collector, E.envelope([:], [("event", E.json(event))])).status == 200)
        #expect(SymbolicationTrustTests.topFunction(collector, Self.eventId).function == "main")
    }
}
