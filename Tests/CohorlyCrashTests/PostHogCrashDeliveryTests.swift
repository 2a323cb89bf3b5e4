import Cohorly
import CohorlyCollector
import CohorlyCrash
import Foundation
import Testing

/// A real crash through the PostHog destination: CrashDemo crashes, the next launch sends the `$exception` event
/// as capture V1 to the collector's `/i/v1/analytics/events`, and the collector shows it symbolicated.
@Suite struct PostHogCrashDeliveryTests {
    @Test func aCrashTravelsThroughPostHogCaptureIntoTheCollector() async throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["phc_demo"]
        let collector = try Collector(configuration: configuration)
        try collector.start()
        defer { collector.stop() }
        let root = try makeTemporaryDirectory("posthog-delivery")
        defer { removeLaunchDirectory(root) }
        let environment = [
            "COHORLY_HOST": collector.baseURL.absoluteString, "COHORLY_TOKEN": "phc_demo",
            "COHORLY_DESTINATION": "posthog",
        ]
        func launch(_ arguments: [String]) async throws -> CrashDemoRun {
            try await runCrashDemo(
                arguments + ["--storage", root.appendingPathComponent("storage").path, "--sender-timeout-ms", "15000"],
                reportDirectory: root.appendingPathComponent("reports"), withClient: true, environment: environment)
        }
        let crash = try await launch(["crash", "fatal-error", "--identify", "crash-user"])
        #expect(crash.signal == SIGILL)
        let report = try #require(try crash.reports().first)
        let next = try await launch(["run", "--identify", "later-user", "--version", "2.0.0"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let events = try await delivered { try collector.store.events(matching: EventQuery(event: "$exception")) }
        #expect(events.count == 1)
        let event = try #require(events.first)
        // The uuid is the report's $insert_id, so a resent crash is deduplicated; crash-time identity and time.
        #expect(event.insertId == report.insertId.lowercased())
        #expect(event.distinctId == "crash-user")
        #expect(event.time == Int64(report.timestampMs))
        let properties = try #require(CohorlyValue(json: event.propertiesJSON))
        #expect(properties["release"] == "CrashDemo@1.0.0")
        #expect(properties["$lib"] == "cohorly-swift-linux")  // from PostHog-Sdk-Info, as PostHog injects it
        // The collector's crash view reads it like a /track crash.
        let request = TransportRequest(
            url: collector.baseURL.appendingPathComponent("api/crashes/\(report.insertId.lowercased())"), method: "GET",
            headers: [], body: [], timeout: 60, connectTimeout: 5)
        guard case .http(200, _, let body) = CurlTransport().send(request) else {
            Issue.record("GET /api/crashes/<id> failed")
            return
        }
        let shown = try #require(CohorlyValue(bytes: body))
        #expect(shown["distinct_id"] == "crash-user")
        #expect(shown["crash"]?["threads"]?.arrayValue?.isEmpty == false)
    }
}
