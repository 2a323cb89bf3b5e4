import CohorlyCollector
import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient

/// Every row of the shared retry contract, client ⇄ collector over loopback.
@Suite struct RetryContractTests {
    @Test func successRemovesTheBatchAndResetsTheBackoff() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder)
        defer { client.shutdown() }
        collector.injectFault(Fault(status: 503), count: 2)
        for index in 0..<3 { client.track("e", properties: ["n": .int(index)]) }
        #expect(await client.flush() == false)
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 3)
        #expect(await client.flush() == true)
        #expect(client.queuedCount == 0)
        #expect(try collector.store.eventCount() == 3)
        // Two 500s: the delivery thread may still be in the success's drain loop and take the new record (and the
        // first 500) before the flush request reaches it; the flush then meets the second. Either way it fails.
        collector.injectFault(Fault(status: 500), count: 2)
        client.track("e")
        #expect(await client.flush() == false)
        // 0.05, 0.1, then back to 0.05 after the success (and 0.1 when the drain loop met the first 500).
        #expect(Array(recorder.retryDelays.prefix(3)) == [0.05, 0.1, 0.05])
        #expect(recorder.retryDelays.count == collector.appliedFaultCount)
    }

    @Test(arguments: [429, 500, 502, 503, 504])
    func retryableStatusKeepsTheQueueAndDoublesUpToTheCap(status: Int) async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder)
        defer { client.shutdown() }
        collector.injectFault(Fault(status: status), count: 5)
        client.track("e")
        for _ in 0..<5 { #expect(await client.flush() == false) }
        #expect(client.queuedCount == 1)
        #expect(try collector.store.eventCount() == 0)
        #expect(recorder.retryDelays == [0.05, 0.1, 0.2, 0.4, 0.4])
        #expect(await client.flush() == true)
        #expect(try collector.store.eventCount() == 1)
    }

    @Test func retryAfterOverridesWithoutJitterAndIsCapped() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder) { options in
            options.retry.maxDelay = 10
            options.retry.random = { 0.99 }  // computed delays would carry +19.6 % jitter
        }
        defer { client.shutdown() }
        collector.injectFault(Fault(status: 429, retryAfter: "7"))
        collector.injectFault(Fault(status: 503, retryAfter: "3600"))
        collector.injectFault(Fault(status: 503))
        client.track("e")
        for _ in 0..<3 { #expect(await client.flush() == false) }
        let delays = recorder.retryDelays
        #expect(delays.count == 3)
        #expect(delays.first == 7)
        #expect(delays.dropFirst().first == 10)
        // The third has no Retry-After: 0.05 * 2^2 with jitter.
        #expect(abs((delays.last ?? 0) - 0.2 * 1.196) < 1e-9)
    }

    @Test func aRateLimitedServerGetsEverythingByHonouringRetryAfter() async throws {
        let collector = try startCollector { $0.rateLimit = .init(requests: 2, window: 1) }
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder) { options in
            options.flushAt = 10
            options.maxBatchSize = 10
            options.retry.maxDelay = 5
        }
        defer { client.shutdown() }
        for index in 0..<50 { client.track("e", properties: ["n": .int(index)]) }
        #expect(await eventually(timeout: 30) { (try? collector.store.eventCount()) == 50 })
        #expect(recorder.retryDelays.contains(1))  // Retry-After: 1, not the computed 0.05 s
        #expect(recorder.retryDelays.allSatisfy { $0 == 1 })
    }

    @Test func tooLargeHalvesTheBatchAndDropsASingleOversizedEvent() async throws {
        let collector = try startCollector { $0.maxBodyBytes = 4_000 }
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder)
        defer { client.shutdown() }
        let padding = CohorlyValue.string(String(repeating: "x", count: 300))
        for index in 0..<20 { client.track("small", properties: ["n": .int(index), "pad": padding]) }
        client.track("huge", properties: ["pad": .string(String(repeating: "y", count: 5_000))])
        client.track("after", properties: [:])
        #expect(await client.flush() == true)
        #expect(client.queuedCount == 0)
        #expect(try storedProperties(collector, event: "small").count == 20)
        #expect(try storedProperties(collector, event: "huge").isEmpty)
        #expect(try storedProperties(collector, event: "after").count == 1)
        let outcomes = recorder.attempts.map(\.outcome)
        #expect(outcomes.first == .halveBatch)
        #expect(outcomes.contains { if case .dropped = $0 { return true } else { return false } })
        #expect(recorder.lines.contains { $0.contains("dropped 1 record(s)") && $0.contains("413") })
        // The batch size stays halved: no request after the first carried more than half of it.
        let sizes = recorder.attempts.map(\.count)
        #expect(sizes.first == 22)
        #expect(sizes.dropFirst().allSatisfy { $0 <= 11 })
    }

    @Test func badRequestDropsTheBatchAndKeepsDraining() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector) { $0.maxBatchSize = 2 }
        defer { client.shutdown() }
        collector.injectFault(Fault(status: 400))
        for index in 0..<4 { client.track("e", properties: ["n": .int(index)]) }
        #expect(await client.flush() == true)
        #expect(client.queuedCount == 0)
        let stored = try storedProperties(collector).compactMap { $0["n"]?.intValue }
        #expect(stored.sorted() == [2, 3])
    }

    @Test func invalidTokenBacksOffTheMaximumAndKeepsTheQueue() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, token: "wrong-token", recorder: recorder)
        defer { client.shutdown() }
        client.track("e")
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        // A configuration problem: kept, waiting the longest backoff.
        #expect(recorder.attempts.map(\.outcome) == [.misconfigured(status: 401, delay: 0.4)])
        #expect(recorder.lines.allSatisfy { !$0.contains("wrong-token") })
    }

    @Test func timeoutsKeepTheQueueAndTheRetryIsStoredOnce() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder) { $0.retry.requestTimeout = 0.25 }
        defer { client.shutdown() }
        // The server stores the batch, then answers too late: a lost acknowledgement.
        collector.injectFault(Fault(delay: 2, afterInsert: true))
        for index in 0..<5 { client.track("e", properties: ["n": .int(index)]) }
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 5)
        #expect(recorder.lines.contains { $0.lowercased().contains("timeout") || $0.contains("timed out") })
        #expect(await client.flush() == true)
        #expect(try collector.store.eventCount() == 5)
    }

    @Test func networkErrorsKeepTheQueue() async throws {
        let collector = try startCollector()
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder)
        defer { client.shutdown() }
        collector.injectFault(Fault(dropConnection: true))
        client.track("e")
        #expect(await client.flush() == false)
        collector.stop()
        #expect(await client.flush() == false)  // connection refused
        #expect(client.queuedCount == 1)
        #expect(recorder.retryDelays == [0.05, 0.1])
    }

    @Test func requestsCarryAtMost500RecordsAndOneMegabyteAndNoRepeatedInsertId() async throws {
        let collector = try startCollector { $0.maxBodyBytes = 4 << 20 }
        defer { collector.stop() }
        let recorder = Recorder()
        // No attempt may time out: with testOptions' 5 s request timeout, a request the collector is slow to answer
        // (storing 500 records or 1 MB while the whole suite loads 2 cores) fails the flush and adds an attempt (an
        // answer after 6 s: flush false, attempts [500]). 120 s is a safety net, not a timing claim.
        let client = makeClient(collector, recorder: recorder) { $0.retry.requestTimeout = 120 }
        defer { client.shutdown() }
        for index in 0..<1_100 { client.track("small", properties: ["n": .int(index)]) }
        #expect(await client.flush() == true)
        #expect(recorder.attempts.map(\.count) == [500, 500, 100])
        let big = CohorlyValue.string(String(repeating: "z", count: 10_000))
        for _ in 0..<250 { client.track("big", properties: ["pad": big]) }
        #expect(await client.flush() == true)
        let bigAttempts = recorder.attempts.dropFirst(3)
        #expect(bigAttempts.count >= 3)
        #expect(bigAttempts.allSatisfy { $0.bytes <= 1_000_000 })
        #expect(try storedProperties(collector, event: "big").count == 250)
        // A repeated $insert_id starts a new request.
        let before = recorder.attempts.count
        for name in ["a", "dup", "b", "dup", "c"] {
            client.track(name, properties: name == "dup" ? ["$insert_id": "same-id"] : [:])
        }
        #expect(await client.flush() == true)
        #expect(recorder.attempts.dropFirst(before).map(\.count) == [3, 2])
    }
}
