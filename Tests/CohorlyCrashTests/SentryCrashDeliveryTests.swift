import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry
import CohorlyCollector
@testable import CohorlyCrash
import Foundation
import TestWaiting
import Testing

/// A real crash through the Sentry destination: CrashDemo crashes with a Sentry DSN, the next launch sends the
/// crash as a native Sentry event, and the crashed launch's session ends `crashed` in the same envelope.
@Suite struct SentryCrashDeliveryTests {
    /// Envelopes received over loopback, each as its item headers and payloads (framing by `length`).
    final class Envelopes: @unchecked Sendable {
        private let lock = NSLock()
        private var received: [[(type: String, payload: CohorlyValue?)]] = []
        var all: [[(type: String, payload: CohorlyValue?)]] { lock.withLock { received } }

        func add(_ body: [UInt8]) {
            var items: [(String, CohorlyValue?)] = []
            var offset = (body.firstIndex(of: UInt8(ascii: "\n")) ?? body.count) + 1
            while offset < body.count, let end = body[offset...].firstIndex(of: UInt8(ascii: "\n")),
                let header = CohorlyValue(bytes: Array(body[offset..<end])), let length = header["length"]?.intValue,
                end + 1 + length <= body.count
            {
                items.append(
                    (header["type"]?.stringValue ?? "", CohorlyValue(bytes: Array(body[end + 1..<end + 1 + length]))))
                offset = end + 2 + length
            }
            lock.withLock { received.append(items) }
        }
    }

    @Test func aCrashIsANativeEventWithItsCrashedSession() async throws {
        let envelopes = Envelopes()
        let server = PlainHTTPServer(maxBodyBytes: 32 << 20) { request in
            guard request.path == "/api/7/envelope/", request.header("X-Sentry-Auth")?.contains("sentry_key=k1") == true
            else { return HTTPResponse(status: 403, body: []) }
            envelopes.add(request.body)
            // Sentry's success answer names the envelope's event (`{}` for session updates alone).
            let header = CohorlyValue(bytes: Array(request.body.prefix { $0 != UInt8(ascii: "\n") }))
            let answer: CohorlyValue = header?["event_id"].map { ["id": $0] } ?? [:]
            return HTTPResponse(status: 200, body: Array(answer.jsonString.utf8))
        }
        let port = try server.start(port: 0)
        defer { server.stop() }
        let root = try makeTemporaryDirectory("sentry-delivery")
        defer { removeLaunchDirectory(root) }
        let environment = ["COHORLY_DESTINATION": "sentry", "COHORLY_SENTRY_DSN": "http://k1@127.0.0.1:\(port)/7"]
        func launch(_ arguments: [String]) async throws -> CrashDemoRun {
            try await runCrashDemo(
                arguments + ["--storage", root.appendingPathComponent("storage").path, "--sender-timeout-ms", "15000"],
                reportDirectory: root.appendingPathComponent("reports"), withClient: true, environment: environment)
        }
        let crash = try await launch(["crash", "fatal-error", "--identify", "crash-user"])
        #expect(crash.signal == SIGILL)
        let report = try #require(try crash.reports().first)
        let next = try await launch(["run", "--identify", "later-user"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        // The crash may go out through the detached sender, which can still be sending when the launch has exited.
        #expect(await eventually { envelopes.all.contains { $0.contains { $0.type == "event" } } })
        let withEvent = try #require(envelopes.all.first { $0.contains { $0.type == "event" } })
        #expect(withEvent.map(\.type) == ["event", "session"])
        let event = try #require(withEvent[0].payload)
        #expect(event["event_id"]?.stringValue == report.insertId.lowercased().replacingOccurrences(of: "-", with: ""))
        #expect(event["level"] == "fatal")
        #expect(event["user"]?["id"] == "crash-user")
        #expect(event["release"] == "CrashDemo@1.0.0")
        let exception = try #require(event["exception"]?["values"]?.arrayValue?.first)
        #expect(exception["type"] == "Fatal error")
        #expect(exception["mechanism"]?["handled"] == false)
        let frames = exception["stacktrace"]?["frames"]?.arrayValue ?? []
        #expect(frames.contains { $0["in_app"] == true && $0["function"] != nil && $0["lineno"] != nil })
        #expect(event["debug_meta"]?["images"]?.arrayValue?.isEmpty == false)
        let refused = try await sentryNormalizerErrors(eventsJSON: CohorlyValue.array([event]).jsonString)
        #expect(refused == [], "\(refused)")
        let session = try #require(withEvent[1].payload)
        #expect(session["status"] == "crashed")
        #expect(session["errors"] == 1)
        // The crashed launch's `ok` went out too, with the same sid.
        let updates = envelopes.all.flatMap { $0 }.filter { $0.type == "session" }.compactMap(\.payload)
        #expect(updates.filter { $0["sid"] == session["sid"] }.map { $0["status"] } == ["ok", "crashed"])
    }

    @Test func everyCrashKindGivesAnEventSentrysNormalizerAccepts() async throws {
        let root = try makeTemporaryDirectory("sentry-schema")
        defer { try? FileManager.default.removeItem(at: root) }
        let sentry = try SentryConfiguration(dsn: "https://key@o1.ingest.sentry.io/1")
        let events = try await withThrowingTaskGroup(of: CohorlyValue.self) { group in
            for expectation in CrashExpectation.all {
                group.addTask {
                    let run = try await runCrashDemo(
                        ["crash", expectation.kind], reportDirectory: root.appendingPathComponent(expectation.kind))
                    let report = try #require(try run.reports().first, "\(expectation.kind): no report")
                    let record = ExceptionBuilder.record(from: report, symbols: ExceptionBuilder.symbolicate(report))
                    return SentryEvent.value(record, configuration: sentry)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(events.count == CrashExpectation.all.count)
        let refused = try await sentryNormalizerErrors(eventsJSON: CohorlyValue.array(events).jsonString)
        #expect(refused == [], "\(refused)")
    }
}
