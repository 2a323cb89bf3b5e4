import CohorlyCollector
import Foundation
import Testing

@testable import Cohorly

/// A wrong project token is not silent: the debug log says 401 and that the events are kept, and a detached
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
            refused.contains { $0.contains("HTTP 401: the project token was refused; 3 record(s) kept") },
            "\(recorder.lines)")
        #expect(!recorder.lines.contains { $0.contains("wrong-token") })
        #expect(client.queuedCount == 3)
        #expect(try collector.store.eventCount() == 0)
    }

    @Test func aSenderGivesUpAfterTwoRefusalsAndKeepsTheRecords() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let app = makeClient(collector, directory: directory, token: "wrong-token")
        app.track("Queued by a launch that died")
        app.shutdown()

        let recorder = Recorder()
        var options = testOptions(directory, recorder: recorder)
        options.retry.baseDelay = 0.01
        // Without the rule it would try for the whole timeout, every 10–400 ms.
        let delivered = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: collector.baseURL, token: "wrong-token", timeout: 30,
            options: options)
        #expect(!delivered)
        #expect(recorder.attempts.map(\.status) == [401, 401])
        #expect(recorder.lines.contains { $0.contains("gives up for this launch; 1 record(s) stay queued") })

        // The records wait for a launch with the right token.
        let fixed = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: collector.baseURL, token: "test-token", timeout: 30,
            options: testOptions(directory))
        #expect(fixed)
        #expect(try collector.store.eventCount() == 1)
    }
}
