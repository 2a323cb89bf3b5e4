import CohorlyCollector
import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// kill -9 in the middle of a PostHog capture V1 flush: nothing lost, nothing stored twice (the resent events
/// keep their uuids, which the collector deduplicates on, as PostHog does).
@Suite struct PostHogDurabilityTests {
    @Test func killMinus9MidFlushThenRestartStoresEveryEventOnce() async throws {
        let collector = try startCollector { $0.tokens = ["phc_test"] }
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let host = collector.baseURL.absoluteString
        let path = "/i/v1/analytics/events"
        // Batch 1 goes through; batch 2 is stored but its answer never comes: the app is killed waiting for it.
        collector.injectFault(Fault(path: path))
        collector.injectFault(Fault(delay: 60, afterInsert: true, path: path))
        let (app, output) = try DurabilityTests.launch([
            "track", "--host", host, "--dir", directory.path, "--count", "500", "--batch", "50", "--posthog", "1",
            "--token", "phc_test",
        ])
        #expect(await output.next() == "persisted 500")
        #expect(await eventually { collector.appliedFaultCount == 2 && collector.delayedRequestCount == 1 })
        let uuidsBeforeKill = try collector.store.events(matching: EventQuery(limit: 1_000_000)).compactMap(\.insertId)
        #expect(uuidsBeforeKill.count == 100)
        kill(app.processIdentifier, SIGKILL)
        await waitForExit(app)
        #expect(app.terminationReason == .uncaughtSignal)

        let (restarted, restartedOutput) = try DurabilityTests.launch([
            "flush", "--host", host, "--dir", directory.path, "--batch", "50", "--posthog", "1", "--token", "phc_test",
        ])
        #expect(await restartedOutput.next() == "flushed")
        await waitForExit(restarted)
        #expect(restarted.terminationStatus == 0)
        let events = try collector.store.events(matching: EventQuery(limit: 1_000_000))
        let seqs = events.compactMap { CohorlyValue(json: $0.propertiesJSON)?["seq"]?.intValue }
        #expect(seqs.count == 500)  // the unacknowledged batch was resent with the same uuids: stored once
        #expect(Set(seqs) == Set(0..<500))
        #expect(Set(events.compactMap(\.insertId)).isSuperset(of: uuidsBeforeKill))
    }
}
