import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog
import CohorlyCollector
@testable import CohorlyCollectorCore
import CohorlyCompression
import Foundation
import Testing

/// The collector as a self-hosted PostHog without capture V1: `/i/v1/analytics/events` answers 404, so the client
/// falls back to the legacy `POST /batch` wire (Sources/CohorlyPostHog/PostHogDestination+Legacy.swift), which the
/// collector stores as it stores capture V1.
@Suite struct PostHogLegacyDeliveryTests {
    /// A collector whose capture V1 route answers 404 (as a self-hosted PostHog without V1 sinks) for the whole test.
    static func selfHostedCollector() throws -> Collector {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["phc_demo"]
        let collector = try Collector(configuration: configuration)
        #expect(collector.faults.add(Fault(status: 404, path: "/i/v1/analytics/events"), count: 1000))
        try collector.start()
        return collector
    }

    @Test func aCrashFallsBackToTheLegacyBatchWireAndIsStored() async throws {
        let collector = try Self.selfHostedCollector()
        defer { collector.stop() }
        let root = try makeTemporaryDirectory("posthog-legacy-delivery")
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
        // Capture V1 was tried and refused, so what arrived came through /batch.
        #expect(collector.faults.pending.count < 1000)
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event.insertId == report.insertId.lowercased())
        #expect(event.distinctId == "crash-user")
        #expect(event.time == Int64(report.timestampMs))
        let properties = try #require(CohorlyValue(json: event.propertiesJSON))
        #expect(properties["$lib"] == "cohorly-swift-linux")  // the legacy wire's own property
        #expect(properties["$exception_list"]?.arrayValue?.isEmpty == false)
    }

    /// Through the 404 fallback, or with the legacy wire chosen from the start (then V1 is never asked).
    @Test(arguments: [false, true])
    func ordinaryEventsGoThroughTheLegacyBatchWireAndAreStored(configured: Bool) async throws {
        let collector = try Self.selfHostedCollector()
        defer { collector.stop() }
        let directory = try makeTemporaryDirectory("posthog-legacy-events")
        defer { try? FileManager.default.removeItem(at: directory) }
        var posthog = try PostHogConfiguration(host: collector.baseURL.absoluteString, apiKey: "phc_demo")
        posthog.compression = true
        if configured { posthog.captureEndpoint = .legacyBatch }
        var options = CohorlyOptions()
        options.storageDirectory = directory
        options.flushInterval = 3600
        options.flushAt = 1_000_000
        options.loadFeatureFlags = false
        let client = Cohorly(posthog: posthog, options: options)
        defer { client.shutdown() }
        client.identify("user-7")
        for index in 0..<3 { client.track("legacy-\(index)", properties: ["n": .int(index)]) }
        #expect(await client.flush())
        // Fallback: one V1 attempt, then /batch for the rest of the launch.
        #expect(collector.faults.pending.count == (configured ? 1000 : 999))
        for index in 0..<3 {
            let events = try collector.store.events(matching: EventQuery(event: "legacy-\(index)"))
            #expect(events.count == 1)
            #expect(events.first?.distinctId == "user-7")
            #expect(events.first.flatMap { CohorlyValue(json: $0.propertiesJSON) }?["n"] == .int(index))
        }
    }

    @Test func theLegacyBodyShapesAndErrorsArePostHogs() throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["phc_demo"]
        let collector = try Collector(configuration: configuration)
        try collector.start()
        defer { collector.stop() }
        func post(_ path: String, _ body: CohorlyValue, gzip: Bool = false) -> (Int, CohorlyValue?) {
            var bytes = Array(body.jsonString.utf8)
            var headers = [("Content-Type", "application/json")]
            if gzip, let compressed = Gzip.compress(bytes) {
                bytes = compressed
                headers.append(("Content-Encoding", "gzip"))
            }
            let request = TransportRequest(
                url: URL(string: collector.baseURL.absoluteString + path) ?? collector.baseURL, headers: headers,
                body: bytes, timeout: 10, connectTimeout: 5)
            guard case .http(let status, _, let answer) = CurlTransport().send(request) else { return (0, nil) }
            return (status, CohorlyValue(bytes: answer))
        }
        func event(_ name: String, _ extra: Properties = [:]) -> CohorlyValue {
            var event: Properties = ["event": .string(name), "distinct_id": "u", "properties": ["k": "v"]]
            event.merge(extra) { _, new in new }
            return .object(event)
        }
        let uuid = "0190a1b2-c3d4-4e5f-8a6b-000000000001"
        let batch: CohorlyValue = [
            "api_key": "phc_demo", "batch": [event("b1", ["uuid": .string(uuid)])],
            "sent_at": "2026-12-01T00:00:00Z",
        ]
        #expect(post("/batch", batch).0 == 200)
        #expect(post("/batch/", batch, gzip: true).1 == ["status": 1])  // the same uuid: stored once
        #expect(post("/e/", event("single", ["api_key": "phc_demo", "timestamp": "2026-12-01T00:00:00Z"])).0 == 200)
        #expect(post("/capture", [event("array1", ["properties": ["token": "phc_demo"]]), event("array2")]).0 == 200)
        for name in ["b1", "single", "array1", "array2"] {
            #expect(try collector.store.events(matching: EventQuery(event: name)).count == 1, "\(name)")
        }
        #expect(try collector.store.events(matching: EventQuery(event: "b1")).first?.insertId == uuid)
        // PostHog's legacy errors: {type, code, detail, attr}; nothing stored.
        let missing = post("/batch", ["batch": [event("refused")]])
        #expect(missing.0 == 401)
        #expect(missing.1?["code"] == "missing_api_key")
        #expect(missing.1?["type"] == "authentication_error")
        #expect(post("/batch", ["api_key": "phc_other", "batch": [event("refused")]]).1?["code"] == "invalid_api_key")
        let badUUID = post("/batch", ["api_key": "phc_demo", "batch": [event("refused", ["uuid": "x"])]])
        #expect(badUUID.0 == 400)
        #expect(badUUID.1?["type"] == "validation_error")
        #expect(post("/e", ["api_key": "phc_demo", "batch": [event("refused", ["distinct_id": ""])]]).0 == 400)
        #expect(try collector.store.events(matching: EventQuery(event: "refused")).isEmpty)
    }
}
