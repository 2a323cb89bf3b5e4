import CohorlyCollector
import Foundation
import Synchronization
import Testing

import Cohorly
@testable import CohorlyClient

/// `sendQueued` measures its deadline and its backoff on one monotonic clock (ContinuousClock in the client).
struct SendQueuedTests {
    @Test func theDeadlineAndTheBackoffAreMeasuredOnTheClockItSleepsOn() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = queueLeftByALaunchThatDied(collector)
        collector.injectFault(Fault(status: 503), count: 20)
        let recorder = Recorder()
        var options = testOptions(directory, recorder: recorder)
        options.retry.baseDelay = 1
        options.retry.maxDelay = 8
        let clock = SteppingClock()
        let delivered = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: collector.baseURL, token: "test-token", timeout: 30,
            options: options, clock: clock, prepare: { _ in })
        #expect(!delivered)
        // Attempts at 0, 1, 3, 7, 15 and 23 s; the last wait is cut to the 7 s left; one more attempt at 30 s.
        #expect(clock.sleeps == [1, 2, 4, 8, 8, 7].map { Duration.seconds($0) })
        #expect(recorder.attempts.count == 7)
        #expect(clock.now.offset == .seconds(30))
        #expect(try collector.store.eventCount() == 0)
    }

    @Test func aQueueThatNoLongerExistsIsNotMadeAgain() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let missing = temporaryDirectory().appendingPathComponent("removed/queue")
        let delivered = await Cohorly.sendQueued(
            storageDirectory: missing, apiHost: collector.baseURL, token: "test-token", timeout: 30,
            options: testOptions(missing))
        #expect(delivered)  // nothing was queued
        #expect(!FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().path))
    }

    @Test func aSenderWhoseQueueIsRemovedWhileItRetriesStops() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = queueLeftByALaunchThatDied(collector)
        collector.injectFault(Fault(status: 503), count: 20)
        let recorder = Recorder()
        var options = testOptions(directory, recorder: recorder)
        options.retry.baseDelay = 1
        // The app's data is deleted during the first backoff.
        let clock = SteppingClock { try? FileManager.default.removeItem(at: directory) }
        _ = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: collector.baseURL, token: "test-token", timeout: 30,
            options: options, clock: clock, prepare: { _ in })
        #expect(recorder.attempts.count == 1)
        #expect(recorder.lines.contains("the queue's directory was removed: the sender stops"))
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    /// The detached crash sender's variant runs without Swift concurrency (before `main`, where a task may never
    /// run): it delivers through the retries, and against a server that holds every answer it still ends by its
    /// deadline (the exchange in flight cut to the sending's timeout), not when the server answers.
    @Test func theBlockingVariantDeliversAndEndsByItsDeadline() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = queueLeftByALaunchThatDied(collector)
        collector.injectFault(Fault(status: 503), count: 2)
        var options = testOptions(directory)
        options.retry.baseDelay = 0.01
        let delivered = Cohorly.sendQueuedBlocking(
            storageDirectory: directory, apiHost: collector.baseURL, token: "test-token", timeout: 60,
            options: options, prepare: { _ in })
        #expect(delivered)
        #expect(collector.appliedFaultCount == 2)
        #expect(try collector.store.eventCount() == 1)

        let held = queueLeftByALaunchThatDied(collector)
        var slow = Fault()
        slow.delay = 6
        collector.injectFault(slow, count: 5)
        let start = ContinuousClock.now
        let gaveUp = Cohorly.sendQueuedBlocking(
            storageDirectory: held, apiHost: collector.baseURL, token: "test-token", timeout: 1,
            options: testOptions(held), prepare: { _ in })
        #expect(!gaveUp)
        #expect(ContinuousClock.now - start < .seconds(4), "\(ContinuousClock.now - start)")
    }
}

/// A clock whose sleeps end at once, moving its time forward by what was asked: waits cost nothing, and what was
/// waited is recorded.
final class SteppingClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let state = Mutex((now: Instant(offset: .zero), sleeps: [Duration]()))
    private let onSleep: @Sendable () -> Void

    /// A clock at zero; `onSleep` runs at every sleep.
    init(onSleep: @escaping @Sendable () -> Void = {}) { self.onSleep = onSleep }

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .nanoseconds(1) }
    /// Every sleep, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        state.withLock { state in
            state.sleeps.append(state.now.duration(to: deadline))
            state.now = max(state.now, deadline)
        }
        onSleep()
        await Task.yield()
    }
}
