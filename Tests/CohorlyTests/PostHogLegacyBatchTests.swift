import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// A self-hosted PostHog without capture V1 answers `/i/v1/analytics/events` with 404: that batch goes again to
/// the legacy `/batch` endpoint (`{api_key, batch, sent_at}`), and so does the rest of the launch; the next launch
/// tries V1 again. Also selectable from the start (`captureEndpoint = .legacyBatch`). Against MockPostHog.
struct PostHogLegacyBatchTests {
    @Test func a404OnCaptureV1ResendsTheBatchToBatchForTheRestOfTheLaunch() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(404, error: "not_found"))
        let directory = temporaryDirectory()
        let client = try makePostHogClient(mock, directory: directory)
        client.track("first", properties: ["$process_person_profile": false, "plan": "pro"])
        #expect(await client.flush())
        client.track("second")
        #expect(await client.flush())
        #expect(client.queuedCount == 0)
        #expect(mock.requests.map(\.path) == ["/i/v1/analytics/events", "/batch", "/batch"])
        let v1 = try #require(mock.requests.first)
        let legacy = mock.requests[1]
        #expect(legacy.uuids == v1.uuids)  // the same event, the same uuid
        #expect(legacy.body?["api_key"] == "phc_test")
        #expect(legacy.body?["sent_at"]?.stringValue?.hasSuffix("Z") == true)
        let event = try #require(legacy.body?["batch"]?.arrayValue?.first)
        #expect(event["event"] == "first")
        #expect(event["distinct_id"]?.stringValue?.isEmpty == false)
        #expect(event["timestamp"]?.stringValue?.hasSuffix("Z") == true)
        #expect(event["options"] == nil)
        // Options fold back into the legacy properties; $lib is a property again.
        #expect(event["properties"]?["$process_person_profile"] == false)
        #expect(event["properties"]?["plan"] == "pro")
        #expect(event["properties"]?["$lib"] == .string(AutomaticProperties.libraryName))
        client.shutdown()

        // The next launch tries capture V1 again.
        let next = try makePostHogClient(mock, directory: directory)
        defer { next.shutdown() }
        next.track("third")
        #expect(await next.flush())
        #expect(mock.requests.last?.path == "/i/v1/analytics/events")
    }

    @Test func theLegacyEndpointCanBeChosenAndRetriesWithTheSameUUIDs() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(503), .status(500))
        let client = try makePostHogClient(mock) { $0.captureEndpoint = .legacyBatch }
        defer { client.shutdown() }
        client.track("a")
        client.track("b")
        #expect(await client.flush())
        #expect(mock.requests.map(\.path) == ["/batch", "/batch", "/batch"])
        #expect(Set(mock.requests.map(\.uuids)).count == 1)
        #expect(mock.requests.first?.uuids.count == 2)
        let timestamps = mock.requests.map { $0.body?["batch"]?.arrayValue?.map { $0["timestamp"] } ?? [] }
        #expect(Set(timestamps.map { CohorlyValue.array($0.compactMap { $0 }).jsonString }).count == 1)
    }

    @Test(arguments: [400, 403, 413])
    func aLegacyRefusalIsNotRetried(status: Int) async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(status))
        let client = try makePostHogClient(mock) { $0.captureEndpoint = .legacyBatch }
        defer { client.shutdown() }
        client.track("doomed")
        #expect(await client.flush())
        #expect(mock.requests.count == 1)
        #expect(client.queuedCount == 0)
    }

    @Test func theConfigurationRemembersTheEndpointForTheDetachedSender() throws {
        var posthog = try PostHogConfiguration(host: "http://127.0.0.1:1", apiKey: "phc_x")
        posthog.captureEndpoint = .legacyBatch
        let restored = PostHogConfiguration(persisted: posthog.persisted, host: posthog.host, apiKey: "phc_x")
        #expect(restored?.captureEndpoint == .legacyBatch)
    }
}
