import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

/// The throw site and the crashing task on the Sentry wire (issue 38 parts 4 and 5): real CrashDemo processes
/// with a Sentry DSN pointing at a loopback server; Sentry's own normalizer (`sentry-relay`) checks each event.
@Suite struct SentryTaskAndThrowSiteTests {
    /// Runs CrashDemo launches against a loopback Sentry endpoint; returns the events received.
    final class Endpoint: Sendable {
        let envelopes = SentryCrashDeliveryTests.Envelopes()
        let server: PlainHTTPServer
        let port: UInt16

        init() throws {
            let envelopes = envelopes
            server = PlainHTTPServer(maxBodyBytes: 32 << 20) { request in
                envelopes.add(request.body)
                // Sentry's success answer names the envelope's event (`{}` for session updates alone).
                let header = CohorlyValue(bytes: Array(request.body.prefix { $0 != UInt8(ascii: "\n") }))
                let answer: CohorlyValue = header?["event_id"].map { ["id": $0] } ?? [:]
                return HTTPResponse(status: 200, body: Array(answer.jsonString.utf8))
            }
            port = try server.start(port: 0)
        }

        var events: [CohorlyValue] { envelopes.all.flatMap { $0 }.filter { $0.type == "event" }.compactMap(\.payload) }

        func launch(_ arguments: [String], root: URL) async throws -> CrashDemoRun {
            try await runCrashDemo(
                arguments + ["--storage", root.appendingPathComponent("storage").path, "--sender-timeout-ms", "15000"],
                reportDirectory: root.appendingPathComponent("reports"), withClient: true,
                environment: ["COHORLY_DESTINATION": "sentry", "COHORLY_SENTRY_DSN": "http://k1@127.0.0.1:\(port)/7"])
        }
    }

    /// The functions of a Sentry stacktrace's frames, innermost first (Sentry lists them oldest first).
    static func functions(_ stacktrace: CohorlyValue?) -> [String] {
        (stacktrace?["frames"]?.arrayValue ?? []).reversed().compactMap { $0["function"]?.stringValue }
    }

    @Test func aHandledErrorsExceptionIsTheThrowSiteAndTheCurrentThreadTheCatchSite() async throws {
        let endpoint = try Endpoint()
        defer { endpoint.server.stop() }
        let root = try makeTemporaryDirectory("sentry-throw-site")
        defer { removeLaunchDirectory(root) }
        let run = try await endpoint.launch(["throw-site", "struct"], root: root)
        #expect(run.exitStatus == 0, "\(run.stdout) \(run.stderr)")
        #expect(await eventually { !endpoint.events.isEmpty })
        let event = try #require(endpoint.events.first)
        let exception = try #require(event["exception"]?["values"]?.arrayValue?.first)
        let thrown = Self.functions(exception["stacktrace"])
        #expect(thrown.first?.contains("charge") == true, "\(thrown)")
        let threads = event["threads"]?["values"]?.arrayValue ?? []
        let current = try #require(threads.first { $0["current"] == true })
        #expect(current["id"] == exception["thread_id"])
        #expect(threads.filter { $0["id"] == current["id"] }.count == 1)
        let caught = Self.functions(current["stacktrace"])
        #expect(caught.first?.contains("checkout") == true, "\(caught)")
        #expect(!caught.contains { $0.contains("charge") })
        let refused = try await sentryNormalizerErrors(eventsJSON: CohorlyValue.array([event]).jsonString)
        #expect(refused == [], "\(refused)")
    }

    @Test func aCrashsBreadcrumbsListItsTaskFirstMarkedWithTheTaskContextAsTags() async throws {
        let endpoint = try Endpoint()
        defer { endpoint.server.stop() }
        let root = try makeTemporaryDirectory("sentry-task")
        defer { removeLaunchDirectory(root) }
        let crash = try await endpoint.launch(["scenario", "task-breadcrumbs"], root: root)
        #expect(crash.signal == SIGILL || crash.signal == SIGTRAP, "\(crash.stdout) \(crash.stderr)")
        let report = try #require(try crash.reports().first)
        let task = try #require(report.task)
        let next = try await endpoint.launch(["run"], root: root)
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(await eventually { !endpoint.events.isEmpty })
        let event = try #require(endpoint.events.first)
        #expect(event["tags"]?["request_id"] == "req-17")
        #expect(event["extra"]?["$exception_task"] == .int(Int(task)))
        let crumbs = event["breadcrumbs"]?["values"]?.arrayValue ?? []
        #expect(crumbs.count == 48)
        #expect(
            crumbs.prefix(2).map { $0["message"]?.stringValue ?? "" } == ["request 17 started", "request 17 loaded"])
        #expect(crumbs.prefix(2).allSatisfy { $0["data"]?["$crashing_task"] == true })
        #expect(crumbs.allSatisfy { $0["data"]?["$task"]?.intValue != nil })
        #expect(crumbs.dropFirst(2).allSatisfy { $0["data"]?["$crashing_task"] == nil })
        let refused = try await sentryNormalizerErrors(eventsJSON: CohorlyValue.array([event]).jsonString)
        #expect(refused == [], "\(refused)")
    }
}
