import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// The checks of PostHog's legacy `capture` suite (docs/posthog.md "Self-hosted PostHog without capture V1": the
/// harness runs it against an
/// adapter declaring `capture_v0`, ours with `--wire batch`), on the client's `/batch` wire against MockPostHog.
/// The harness itself is not published where this machine can reach it; these are its checks, one by one.
@Suite struct PostHogLegacySuiteTests {
    private func legacyClient(_ mock: MockPostHog, compression: Bool = false, maxRetries: Int = 3) throws -> Cohorly {
        try makePostHogClient(mock) {
            $0.captureEndpoint = .legacyBatch
            $0.compression = compression
            $0.maxRetries = maxRetries
        }
    }

    @Test(arguments: [408, 500, 502, 503, 504])
    func aRetryableStatusIsRetriedMaxRetriesTimesKeepingUuidsAndTimestamps(status: Int) async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(status, retryAfter: "1"), .status(status), .status(status), .status(status))
        let client = try legacyClient(mock)
        defer { client.shutdown() }
        client.track("a")
        #expect(await client.flush() == false)
        let requests = mock.requests
        #expect(requests.count == 4)  // max_retries 3 = 4 requests
        #expect(Set(requests.map(\.path)) == ["/batch"])
        #expect(Set(requests.map(\.uuids)).count == 1)
        #expect(Set(requests.map { $0.batch.map { $0["timestamp"]?.stringValue ?? "" } }).count == 1)
        // Kept, and delivered unchanged by the next flush.
        #expect(await client.flush())
        #expect(mock.requests.last?.uuids == requests.first?.uuids)
    }

    /// The suite's `respects_retry_after_header`: a 429 with `Retry-After: 3`, then 200; at least 2 requests within
    /// 5 s, the retry at least 2.5 s after the first (here `Retry-After: 1` and 0.9 s, against a 0.001 s backoff).
    @Test func a429IsRetriedAfterItsRetryAfter() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(429, retryAfter: "1", error: "Rate limited"), .ok)
        let client = try makePostHogClient(mock) {
            $0.captureEndpoint = .legacyBatch
            $0.maxRetryDelay = 30
        }
        defer { client.shutdown() }
        client.track("a")
        #expect(await client.flush())
        let requests = mock.requests
        #expect(requests.count == 2)
        #expect(Set(requests.map(\.uuids)).count == 1)
        if requests.count == 2 { #expect(requests[1].receivedAt - requests[0].receivedAt >= 0.9) }
        #expect(client.queuedCount == 0)
    }

    @Test func maxRetriesIsRespected() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(503), .status(503), .status(503))
        let client = try legacyClient(mock, maxRetries: 1)
        defer { client.shutdown() }
        client.track("a")
        #expect(await client.flush() == false)
        #expect(mock.requests.count == 2)
    }

    @Test(arguments: [400, 403, 413])
    func aRefusalIsNotRetried(status: Int) async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(status))
        let client = try legacyClient(mock)
        defer { client.shutdown() }
        client.track("doomed")
        #expect(await client.flush())
        #expect(mock.requests.count == 1)
        #expect(client.queuedCount == 0)
    }

    /// 401 is not retried in the flush either; the events stay queued (a refused key is a configuration
    /// problem, issue 23) and flush() says false.
    @Test func aRefusedKeyIsNotRetriedAndKeepsTheEvents() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(401, error: "invalid_api_key"))
        let client = try legacyClient(mock)
        defer { client.shutdown() }
        client.track("kept")
        #expect(await client.flush() == false)
        #expect(mock.requests.count == 1)
        #expect(client.queuedCount == 1)
    }

    @Test func severalEventsGoInOneRequestWithTheKeyAndTheRequiredFields() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try legacyClient(mock)
        defer { client.shutdown() }
        client.identify("user-7")
        for index in 0..<3 { client.track("e\(index)", properties: ["n": .int(index)]) }
        #expect(await client.flush())
        let request = try #require(mock.requests.last)
        #expect(request.path == "/batch")
        #expect(request.body?["api_key"] == "phc_test")
        let events = request.batch.filter { $0["event"]?.stringValue?.hasPrefix("e") == true }
        #expect(events.count == 3)
        #expect(Set(request.uuids).count == request.batch.count)
        for (index, event) in events.enumerated() {
            #expect(event["distinct_id"]?.stringValue == "user-7")
            #expect(event["properties"]?["n"] == .int(index))
            #expect(event["properties"]?["$lib"] == .string(AutomaticProperties.libraryName))
            #expect(event["timestamp"]?.stringValue?.hasSuffix("Z") == true)
            #expect(UUID(uuidString: event["uuid"]?.stringValue ?? "") != nil)
        }
    }

    @Test func nothingToSendMakesNoRequest() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try legacyClient(mock)
        defer { client.shutdown() }
        #expect(await client.flush())
        #expect(mock.requests.isEmpty)
    }

    @Test func gzipWhenCompressionIsOn() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try legacyClient(mock, compression: true)
        defer { client.shutdown() }
        for index in 0..<20 { client.track("compressed", properties: ["n": .int(index), "pad": "xxxxxxxxxxxxxxxx"]) }
        #expect(await client.flush())
        let request = try #require(mock.requests.first)
        #expect(request.path == "/batch")
        #expect(request.header("Content-Encoding") == "gzip")
        #expect(request.batch.count == 20)
        #expect(request.body?["api_key"] == "phc_test")
    }
}
