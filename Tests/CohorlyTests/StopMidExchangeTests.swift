import CohorlyCollector
import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Stopping while a request is in flight (Delivery.stop, the exit hook in Cohorly.swift, SentryDestination.deliver):
/// the exchange in flight ends and its records leave the queue, no other starts. A record the server took must not
/// stay queued — the next launch (or the detached sender) would send it again, and Sentry counts every session
/// update it receives.
@Suite struct StopMidExchangeTests {
    @Test func aShutdownWhileEnvelopesGoStartsNoOtherEnvelope() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock) { $0.sessions = false }
        let count = SentryDestination.maxEnvelopesInFlight + 2
        for _ in 0..<count { _ = try client.enqueuePrepared(SentryRecords.handled()) }
        mock.hold(request: 1)
        let flush = Task { await client.flush() }
        #expect(await eventually { mock.arrivedCount == 1 })
        let stopped = Task { try await offThePool { client.shutdown() } }
        #expect(await eventually { client.delivery.isStopping })
        mock.release()
        try await stopped.value
        #expect(await flush.value == false)
        // The envelope in flight was answered and its record removed; the others were never sent (an accepted
        // envelope would otherwise open the window to the whole batch).
        #expect(mock.envelopes.count == 1)
        #expect(mock.storedEvents.count == 1)
        #expect(client.queuedCount == count - 1)
    }

    @Test func anAppExitingMidRequestWaitsForItsAnswerAndSendsNothingMore() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        // The first batch is stored and its answer comes 0.8 s later; the app exits meanwhile.
        collector.injectFault(Fault(delay: 0.8, afterInsert: true, path: "/track"))
        let input = Pipe()
        let process = Process()
        process.executableURL = DurabilityTests.testApp
        process.arguments = [
            "track-then-exit-on-input", "--host", collector.baseURL.absoluteString, "--dir", directory.path,
            "--count", "100", "--batch", "50",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let lines = LineReader(output.fileHandleForReading)
        #expect(await lines.next() == "persisted 100")
        #expect(await eventually { collector.delayedRequestCount == 1 })
        input.fileHandleForWriting.write(Data("exit\n".utf8))
        await waitForExit(process)
        #expect(process.terminationStatus == 0)
        // The answer was taken (the 50 it stored are no longer queued); the second batch was not sent.
        #expect(try collector.store.events().count == 50)
        let next = Cohorly(apiHost: collector.baseURL, token: "test-token", options: testOptions(directory))
        defer { next.shutdown() }
        #expect(next.queuedCount == 50)
    }
}
