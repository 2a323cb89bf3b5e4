import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Sentry's answers (docs/sentry.md "Answers"): rate limits per category, held records,
/// drops that name the reason, retries with backoff.
@Suite struct SentryAnswerTests {
    /// A client whose queue holds one handled error and this launch's `ok` session update.
    func clientWithAnErrorAndASession(_ mock: MockSentry, recorder: Recorder) throws -> Cohorly {
        let client = try makeSentryClient(mock, recorder: recorder)
        _ = try client.enqueuePrepared(SentryRecords.handled())
        return client
    }

    @Test func aLimitedCategoryIsHeldWhileOthersFlow() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try clientWithAnErrorAndASession(mock, recorder: recorder)
        defer { client.shutdown() }
        // The session goes first and is answered with a limit on sessions only (on a 200): the error still goes.
        mock.then(.ok(headers: [("X-Sentry-Rate-Limits", "60:session:organization:quota_exceeded")]))
        #expect(await client.flush())
        #expect(mock.envelopes.count == 2)
        #expect(mock.events.count == 1)
        // A second session update (the exit) is held: not sent, still queued.
        client.endSentrySession()
        #expect(await client.flush() == false)
        #expect(mock.envelopes.count == 2)
        #expect(client.queuedCount == 1)
        #expect(recorder.lines.contains { $0.contains("rate limited by Sentry: 1 record(s) held") })
        // Errors still flow while sessions are limited.
        _ = try client.enqueuePrepared(SentryRecords.handled())
        #expect(await client.flush() == false)
        #expect(mock.events.count == 2)
        #expect(client.queuedCount == 1)
    }

    @Test func a429HoldsItsCategoriesForItsTime() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock, { $0.sessions = false })
        defer { client.shutdown() }
        // The limit is timed on a clock the test moves on: held exactly for its 3 s, however slow the machine.
        let clock = TestClock()
        try #require(client.destination as? SentryDestination).setClock { clock.now }
        mock.then(.status(429, headers: [("X-Sentry-Rate-Limits", "3:error;default:key, 30:session:key")]))
        _ = try client.enqueuePrepared(SentryRecords.handled())
        #expect(await client.flush() == false)
        #expect(mock.envelopes.count == 1)
        clock.advance(2.9)
        #expect(await client.flush() == false)
        #expect(mock.envelopes.count == 1)  // held: not sent again within the limit
        #expect(client.queuedCount == 1)
        clock.advance(0.2)
        #expect(await client.flush())
        #expect(mock.envelopes.count == 2)
        #expect(mock.storedEvents.count == 1)
        #expect(client.queuedCount == 0)
    }

    /// A monotonic clock that only moves when told.
    final class TestClock: @unchecked Sendable {
        private let lock = NSLock()
        private var seconds = 1_000.0
        var now: Double { lock.withLock { seconds } }
        func advance(_ by: Double) { lock.withLock { seconds += by } }
    }

    @Test func a429WithOnlyRetryAfterHoldsEverything() throws {
        var limits = SentryRateLimits()
        limits.update(status: 429, headers: [:], retryAfter: 30, now: 100)
        #expect(limits.remaining("error", now: 100) == 30)
        #expect(limits.remaining("session", now: 110) == 20)
        var bare = SentryRateLimits()
        bare.update(status: 429, headers: [:], retryAfter: nil, now: 0)
        #expect(bare.remaining("attachment", now: 0) == 60)
        var listed = SentryRateLimits()
        listed.update(
            status: 200, headers: ["x-sentry-rate-limits": "10::organization, 5:error:key, 50:error:key"],
            retryAfter: nil, now: 0)
        #expect(listed.remaining("session", now: 0) == 10)  // an empty list: every category
        #expect(listed.remaining("error", now: 0) == 50)  // the longer limit wins
        var ok = SentryRateLimits()
        ok.update(status: 200, headers: [:], retryAfter: 5, now: 0)
        #expect(ok.remaining("error", now: 0) == 0)
    }

    @Test func anOversizedItemIsDroppedAloneAndLogged() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makeSentryClient(mock, recorder: recorder) { $0.sessions = false }
        defer { client.shutdown() }
        _ = try client.enqueuePrepared(SentryRecords.crash())
        _ = try client.enqueuePrepared(SentryRecords.handled())
        mock.then(.status(413))
        #expect(await client.flush())
        #expect(mock.envelopes.count == 2)
        #expect(mock.storedEvents.count == 1)
        #expect(client.queuedCount == 0)
        #expect(
            recorder.lines.contains {
                $0.contains("dropped event 5c8e3a023f7a4d579d7e6f7f0a1b2c3d") && $0.contains("413")
            })
    }

    @Test func anInvalidItemIsDroppedWithSentrysReason() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makeSentryClient(mock, recorder: recorder) { $0.sessions = false }
        defer { client.shutdown() }
        _ = try client.enqueuePrepared(SentryRecords.handled())
        mock.then(.status(400, body: #"{"detail":"invalid event envelope","causes":["missing event_id"]}"#))
        #expect(await client.flush())
        #expect(client.queuedCount == 0)
        #expect(recorder.lines.contains { $0.contains("invalid (400): invalid event envelope") })
    }

    @Test(arguments: [MockSentry.Answer.status(500), .status(503), .dropConnection])
    func serverAndNetworkErrorsAreRetriedWithBackoff(_ failure: MockSentry.Answer) async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makeSentryClient(mock, recorder: recorder) { $0.sessions = false }
        defer { client.shutdown() }
        _ = try client.enqueuePrepared(SentryRecords.handled())
        mock.then(failure, failure)
        #expect(await client.flush() == false)
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        #expect(await client.flush())
        #expect(mock.storedEvents.count == 1)
        let delays = recorder.retryDelays
        #expect(delays.count == 2)
        #expect(delays[1] > delays[0])
    }
}
