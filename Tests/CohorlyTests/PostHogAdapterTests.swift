import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// The compliance adapter (Examples/PostHogComplianceAdapter) as PostHog's harness drives it: over HTTP, the
/// real client inside, a mock PostHog behind it.
@Suite struct PostHogAdapterTests {
    /// A running adapter process on a free port, stopped by `stop()`.
    final class RunningAdapter {
        let process = Process()
        let url: URL

        init(_ arguments: [String] = []) async throws {
            let directory = DurabilityTests.testApp.deletingLastPathComponent()
            process.executableURL = directory.appendingPathComponent("posthog-compliance-adapter")
            process.arguments = ["--port", "0"] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let line = await LineReader(pipe.fileHandleForReading).next() ?? ""
            guard let range = line.range(of: "http://") else { throw CocoaError(.fileReadUnknown) }
            url = URL(string: String(line[range.lowerBound...])) ?? URL(fileURLWithPath: "/")
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }

        /// Calls an endpoint; returns the status and the parsed answer.
        func call(_ path: String, _ body: CohorlyValue? = nil) async -> (Int, CohorlyValue?) {
            let request = TransportRequest(
                url: url.appendingPathComponent(path),
                method: body == nil && path != "flush" && path != "reset" ? "GET" : "POST",
                headers: [("Content-Type", "application/json")], body: Array((body?.jsonString ?? "").utf8),
                timeout: 120, connectTimeout: 5)
            let response = try? await offThePool { CurlTransport().send(request) }
            guard case .http(let status, _, let answer) = response else { return (0, nil) }
            return (status, CohorlyValue(bytes: answer))
        }
    }

    /// The collector's Host and Origin rules: a web page can neither re-point the adapter (a cross-site
    /// `text/plain` POST to /init with another host) nor reach it through a name it controls.
    @Test func aForeignOriginOrHostIsRefused() async throws {
        let adapter = try await RunningAdapter()
        defer { adapter.stop() }
        let port = adapter.url.port ?? 0
        func post(_ headers: [(String, String)]) async -> Int {
            let body = #"{"api_key":"phc_x","host":"http://attacker.example"}"#
            let request = TransportRequest(
                url: adapter.url.appendingPathComponent("init"), method: "POST", headers: headers,
                body: Array(body.utf8), timeout: 10, connectTimeout: 5)
            guard case .http(let status, _, _) = try? await offThePool({ CurlTransport().send(request) }) else {
                return 0
            }
            return status
        }
        #expect(await post([("Content-Type", "text/plain"), ("Origin", "http://attacker.example")]) == 403)
        #expect(await post([("Content-Type", "application/json"), ("Host", "attacker.example:\(port)")]) == 421)
        let allowed = await post([("Content-Type", "application/json"), ("Origin", "http://127.0.0.1:\(port)")])
        #expect(allowed != 403 && allowed != 421 && allowed != 0)
    }

    @Test func healthInitCaptureFlushAndStateDriveTheRealClient() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let adapter = try await RunningAdapter()
        defer { adapter.stop() }
        let (_, health) = await adapter.call("health")
        #expect(health?["capabilities"]?.arrayValue?.contains("capture_v1") == true)
        #expect(health?["capabilities"]?.arrayValue?.contains("encoding_gzip") == true)
        // No timer flush between the two captures (however long the test takes between its calls): both go out in
        // the one request `flush` sends.
        let (status, _) = await adapter.call(
            "init",
            [
                "api_key": "phc_adapter", "host": .string(mock.url.absoluteString), "flush_at": 10,
                "flush_interval_ms": 600_000, "max_retries": 2, "enable_compression": true, "disable_geoip": true,
            ])
        #expect(status == 200)
        mock.then(.status(503, retryAfter: "0"), .results(["ok", "retry"]))
        let (_, first) = await adapter.call(
            "capture",
            [
                "distinct_id": "u1", "event": "one", "properties": nil, "timestamp": "2026-11-30T10:00:00.250+02:00",
                "options": ["process_person_profile": false],
            ])
        let (_, second) = await adapter.call(
            "capture", ["distinct_id": "u1", "event": "two", "properties": ["k": "v"]])
        let uuids = [first?["uuid"]?.stringValue, second?["uuid"]?.stringValue].compactMap { $0 }
        #expect(uuids.count == 2)
        let (_, flushed) = await adapter.call("flush")
        #expect(flushed?["events_flushed"] == 2)
        let requests = mock.requests
        #expect(requests.map { $0.header("PostHog-Attempt") } == ["1", "2", "3"])
        #expect(requests.allSatisfy { $0.header("Content-Encoding") == "gzip" })
        #expect(requests.allSatisfy { $0.header("Authorization") == "Bearer phc_adapter" })
        #expect(requests[0].uuids == uuids)
        #expect(requests[2].uuids == [uuids[1]])
        let item = try #require(requests[0].batch.first)
        #expect(item["timestamp"] == "2026-11-30T08:00:00.250Z")
        #expect(item["distinct_id"] == "u1")
        #expect(item["options"] == ["process_person_profile": false])
        #expect(item["properties"]?["$geoip_disable"] == true)
        let (_, state) = await adapter.call("state")
        #expect(state?["total_events_captured"] == 2)
        #expect(state?["total_events_sent"] == 2)
        #expect(state?["total_retries"] == 2)
        #expect(state?["pending_events"] == 0)
    }

    @Test func theLegacyWireDeclaresCaptureV0AndDrivesTheClientOnBatch() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let adapter = try await RunningAdapter(["--wire", "batch"])
        defer { adapter.stop() }
        let (_, health) = await adapter.call("health")
        #expect(health?["capabilities"]?.arrayValue?.contains("capture_v0") == true)
        #expect(health?["capabilities"]?.arrayValue?.contains("capture_v1") == false)
        _ = await adapter.call(
            "init",
            [
                "api_key": "phc_adapter", "host": .string(mock.url.absoluteString), "flush_at": 10,
                "flush_interval_ms": 600_000, "max_retries": 3, "enable_compression": true,
            ])
        mock.then(.status(502), .ok)
        let (_, captured) = await adapter.call(
            "capture", ["distinct_id": "u1", "event": "legacy", "properties": ["k": "v"]])
        let (_, flushed) = await adapter.call("flush")
        #expect(flushed?["events_flushed"] == 1)
        #expect(mock.requests.map(\.path) == ["/batch", "/batch"])
        #expect(mock.requests.allSatisfy { $0.header("Content-Encoding") == "gzip" })
        #expect(mock.requests.first?.body?["api_key"] == "phc_adapter")
        #expect(mock.requests.allSatisfy { $0.uuids == [captured?["uuid"]?.stringValue ?? "?"] })
        let event = try #require(mock.requests.first?.batch.first)
        #expect(event["properties"]?["k"] == "v")
        #expect(event["properties"]?["$lib"] != nil)
        let (_, state) = await adapter.call("state")
        #expect(state?["total_events_sent"] == 1)
        #expect(state?["total_retries"] == 1)
    }

    @Test func resetStopsInFlightRetriesAtOnce() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let adapter = try await RunningAdapter()
        defer { adapter.stop() }
        _ = await adapter.call(
            "init", ["api_key": "phc_adapter", "host": .string(mock.url.absoluteString), "flush_at": 1])
        mock.then(.status(503, retryAfter: "30"))
        _ = await adapter.call("capture", ["distinct_id": "u1", "event": "stuck"])
        #expect(await eventually { mock.requests.count == 1 })
        let start = Date()
        #expect(await adapter.call("reset").0 == 200)
        #expect(Date().timeIntervalSince(start) < 20)  // not the 30 s Retry-After wait
        // The dropped instance's threads are gone: a new instance's traffic is all there is.
        _ = await adapter.call("init", ["api_key": "phc_adapter", "host": .string(mock.url.absoluteString)])
        _ = await adapter.call("capture", ["distinct_id": "u2", "event": "fresh"])
        _ = await adapter.call("flush")
        #expect(mock.requests.map(\.events) == [["stuck"], ["fresh"]])
    }

    @Test func badInputIsAClearErrorNamingTheEvent() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let adapter = try await RunningAdapter()
        defer { adapter.stop() }
        let (initStatus, initAnswer) = await adapter.call("init", ["api_key": "phc_x", "host": "us.i.posthog.com"])
        #expect(initStatus == 400)
        #expect(initAnswer?["error"]?.stringValue?.contains("needs a scheme") == true)
        let (emptyKey, _) = await adapter.call("init", ["api_key": "", "host": .string(mock.url.absoluteString)])
        #expect(emptyKey == 400)
        _ = await adapter.call("init", ["api_key": "phc_x", "host": .string(mock.url.absoluteString)])
        let (propertiesStatus, propertiesAnswer) = await adapter.call(
            "capture", ["distinct_id": "u", "event": "odd", "properties": "not an object"])
        #expect(propertiesStatus == 400)
        #expect(
            propertiesAnswer?["error"]?.stringValue?.contains("event \"odd\": properties must be an object") == true)
        let (timeStatus, timeAnswer) = await adapter.call(
            "capture", ["distinct_id": "u", "event": "late", "timestamp": "half past nine"])
        #expect(timeStatus == 400)
        #expect(timeAnswer?["error"]?.stringValue?.contains("event \"late\": timestamp \"half past nine\"") == true)
        // The queue is not stuck: a good event still goes through.
        _ = await adapter.call("capture", ["distinct_id": "u", "event": "fine"])
        _ = await adapter.call("flush")
        #expect(mock.requests.flatMap(\.events) == ["fine"])
    }
}
