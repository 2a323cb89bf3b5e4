import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// A wrong project token is not silent: the debug log says 401 and that the events are kept (and, without debug,
/// one line per launch: ConfigurationProblemTests), and a detached
/// sender stops trying for this launch.
struct RefusedTokenTests {
    @Test func theDebugLogSays401AndThatTheEventsAreKept() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, token: "wrong-token", recorder: recorder)
        defer { client.shutdown() }
        for index in 0..<3 { client.track("Refused", properties: ["n": index]) }
        #expect(await client.flush() == false)
        let refused = recorder.lines.filter { $0.contains("401") }
        #expect(
            refused.contains { $0.contains("/track: HTTP 401") && $0.contains("3 record(s) kept") },
            "\(recorder.lines)")
        #expect(!recorder.lines.contains { $0.contains("wrong-token") })
        #expect(client.queuedCount == 3)
        #expect(try collector.store.eventCount() == 0)
    }

    @Test func aSenderGivesUpAfterTwoRefusalsAndKeepsTheRecords() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = queueLeftByALaunchThatDied(collector)
        // Refused twice, then accepted: a sender without the rule delivers on its third attempt, so the test fails
        // at once instead of waiting out a timeout. The timeout is a safety net only: this task runs on the test
        // process's cooperative pool (as wide as the machine has cores), which other tests' synchronous waits can
        // hold for tens of seconds; a sender whose first answer came back after its timeout ran out would give up
        // without its second attempt.
        collector.injectFault(Fault(status: 401), count: 2)
        let recorder = Recorder()
        var options = testOptions(directory, recorder: recorder)
        options.retry.baseDelay = 0.01
        let delivered = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: collector.baseURL, token: "test-token", timeout: 120,
            options: options)
        #expect(!delivered)
        #expect(recorder.attempts.map(\.status) == [401, 401])
        #expect(recorder.lines.contains { $0.contains("gives up for this launch; 1 record(s) stay queued") })
        #expect(try collector.store.eventCount() == 0)

        // The records wait for the next launch.
        let next = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: collector.baseURL, token: "test-token", timeout: 120,
            options: testOptions(directory))
        #expect(next)
        #expect(try collector.store.eventCount() == 1)
    }
}
