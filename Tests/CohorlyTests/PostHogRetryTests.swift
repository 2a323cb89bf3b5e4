import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// Capture V1 answers and retries (docs/posthog.md "Answers and retries"): every row of the result and status
/// tables, client ⇄ mock PostHog over loopback.
@Suite struct PostHogRetryTests {
    @Test(arguments: [408, 500, 502, 503, 504])
    func retryableStatusResendsTheSameBatchFourTimesThenKeepsIt(status: Int) async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock)
        defer { client.shutdown() }
        mock.then(.status(status, retryAfter: "1"), .status(status), .status(status), .status(status))
        client.track("a")
        client.track("b")
        #expect(await client.flush() == false)
        let requests = mock.requests
        #expect(requests.count == 4)
        #expect(requests.map { $0.header("PostHog-Attempt") } == ["1", "2", "3", "4"])
        #expect(Set(requests.compactMap { $0.header("PostHog-Request-Id") }).count == 1)
        #expect(Set(requests.compactMap { $0.body?["created_at"] }).count == 1)
        #expect(Set(requests.map(\.uuids)).count == 1)
        #expect(Set(requests.map { $0.batch.map { $0["timestamp"] } }).count == 1)
        #expect(requests.first?.uuids.count == 2)
        // Attempts exhausted on a retryable answer: kept for the next flush, which delivers them unchanged.
        #expect(client.queuedCount == 2)
        #expect(await client.flush())
        #expect(mock.requests.count == 5)
        #expect(mock.requests.last?.uuids == requests.first?.uuids)
        #expect(mock.requests.last?.header("PostHog-Request-Id") != requests.first?.header("PostHog-Request-Id"))
        #expect(client.queuedCount == 0)
    }

    @Test func transportErrorsAreRetriedAndTheRetryDelivers() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock)
        defer { client.shutdown() }
        mock.then(.dropConnection, .dropConnection)
        client.track("a")
        #expect(await client.flush())
        #expect(mock.requests.map { $0.header("PostHog-Attempt") } == ["1", "2", "3"])
        #expect(Set(mock.requests.map(\.uuids)).count == 1)
    }

    // 401 (a refused key) is kept and said once (ConfigurationProblemTests); 404 falls back to the legacy /batch
    // endpoint (PostHogLegacyBatchTests).
    @Test(arguments: [400, 402, 403, 415, 429, 418])
    func everyOtherStatusIsTerminalAndLogged(status: Int) async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makePostHogClient(mock, recorder: recorder)
        defer { client.shutdown() }
        mock.then(.status(status, retryAfter: "1", error: "some_tag"))
        client.track("doomed")
        #expect(await client.flush())
        #expect(mock.requests.count == 1)
        #expect(client.queuedCount == 0)
        let uuid = try #require(mock.requests.first?.uuids.first)
        #expect(
            recorder.lines.contains {
                $0.contains("dropped 1 event(s) (HTTP \(status) some_tag, not retried)")
                    && $0.contains("\"doomed\" \(uuid)")
            })
    }

    @Test func onlyRetryEventsAreResentAndEveryOtherResultIsTerminal() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makePostHogClient(mock, recorder: recorder)
        defer { client.shutdown() }
        // ok, retry, drop, limited, warning, an unknown result, and one absent from the map.
        mock.then(.results(["ok", "retry", "drop", "limited", "warning", "mystery"], retryAfter: "1"))
        for name in ["ok", "retry", "drop", "limited", "warning", "mystery", "absent"] { client.track(name) }
        #expect(await client.flush())
        let requests = mock.requests
        #expect(requests.count == 2)
        #expect(requests[1].events == ["retry"])
        #expect(requests[1].uuids == [requests[0].uuids[1]])
        #expect(requests[1].header("PostHog-Attempt") == "2")
        #expect(requests[1].header("PostHog-Request-Id") == requests[0].header("PostHog-Request-Id"))
        #expect(requests[1].body?["created_at"] == requests[0].body?["created_at"])
        #expect(requests[1].batch.first?["timestamp"] == requests[0].batch[1]["timestamp"])
        #expect(client.queuedCount == 0)
        #expect(recorder.lines.contains { $0.contains("answered drop (invalid_event)") && $0.contains("\"drop\"") })
        #expect(recorder.lines.contains { $0.contains("answered limited") && $0.contains("\"limited\"") })
    }

    @Test func retryResultsThatNeverSucceedStayQueued() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock) { $0.maxRetries = 1 }
        defer { client.shutdown() }
        mock.then(.results(["ok", "retry"]), .results(["retry"]))
        client.track("fine")
        client.track("stuck")
        #expect(await client.flush() == false)
        #expect(mock.requests.count == 2)  // max_retries 1 → 2 attempts
        #expect(client.queuedCount == 1)
        #expect(await client.flush())
        #expect(mock.requests.last?.events == ["stuck"])
    }

    @Test func payloadTooLargeHalvesUntilOneEventThenDropsIt() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makePostHogClient(mock, recorder: recorder)
        defer { client.shutdown() }
        mock.then(.status(413, error: "payload_too_large"), .ok, .ok, .status(413), .status(413), .ok)
        for index in 0..<4 { client.track("e\(index)") }
        #expect(await client.flush())
        #expect(mock.requests.map(\.batch.count) == [4, 2, 2])
        #expect(Set(mock.requests.compactMap { $0.header("PostHog-Request-Id") }).count == 3)
        #expect(mock.requests.allSatisfy { $0.header("PostHog-Attempt") == "1" })
        client.track("x")
        client.track("y")
        #expect(await client.flush())
        // Batch size is 2 now: 413 → halves to 1 → 413 for the single event → dropped; the other goes through.
        #expect(mock.requests.dropFirst(3).map(\.events) == [["x", "y"], ["x"], ["y"]])
        #expect(recorder.lines.contains { $0.contains("HTTP 413") && $0.contains("\"x\"") })
    }

    @Test func theDelayScheduleDoublesIsCappedAndRetryAfterIsAMinimum() throws {
        var posthog = try PostHogConfiguration(host: "https://example.com", apiKey: "phc_x")
        #expect((1...7).map { posthog.delay(afterAttempt: $0, retryAfter: nil) } == [1, 2, 4, 8, 16, 30, 30])
        #expect(posthog.delay(afterAttempt: 1, retryAfter: 5) == 5)
        #expect(posthog.delay(afterAttempt: 4, retryAfter: 5) == 8)
        #expect(posthog.delay(afterAttempt: 1, retryAfter: 3600) == 30)
        posthog.retryBaseDelay = 0.1
        #expect(posthog.delay(afterAttempt: 3, retryAfter: nil) == 0.4)
    }

    @Test func shutdownStopsRetriesAtOnceAndKeepsTheEvents() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let directory = temporaryDirectory()
        // flushAt 1: the delivery thread sends (and starts waiting to retry) on its own.
        let client = try makePostHogClient(mock, directory: directory) { posthog in
            posthog.retryBaseDelay = 600
            posthog.maxRetryDelay = 600
        } options: {
            $0.flushAt = 1
        }
        mock.then(.status(503))
        client.track("kept")
        #expect(await eventually { mock.requests.count == 1 })
        let start = Date()
        client.shutdown()
        #expect(Date().timeIntervalSince(start) < 60)  // not the 600 s retry wait
        #expect(mock.requests.count == 1)
        let reopened = try makePostHogClient(mock, directory: directory)
        defer { reopened.shutdown() }
        #expect(await reopened.flush())
        #expect(mock.requests.last?.events == ["kept"])
        #expect(mock.requests.last?.uuids == mock.requests.first?.uuids)
    }

    @Test func resetStopsTheRetriesOfClearedEvents() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock) { posthog in
            posthog.retryBaseDelay = 600
            posthog.maxRetryDelay = 600
        } options: {
            $0.flushAt = 1
        }
        defer { client.shutdown() }
        mock.then(.status(500))
        client.track("before reset")
        #expect(await eventually { mock.requests.count == 1 })
        let start = Date()
        client.reset()
        #expect(await client.flush())
        #expect(Date().timeIntervalSince(start) < 60)
        #expect(mock.requests.count == 1)
        #expect(client.queuedCount == 0)
    }
}
