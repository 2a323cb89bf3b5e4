import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Envelopes in flight at once (SentryDestination.deliver, SentryExchanges): one event per envelope does not cost
/// one round trip each, session updates still go alone and in order, and a failure among them loses nothing.
@Suite struct SentryInFlightTests {
    @Test func envelopesGoSeveralAtOnceAndSessionUpdatesAlone() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock)
        defer { client.shutdown() }
        let width = SentryDestination.maxEnvelopesInFlight
        // Queued: this launch's `ok` session, more errors than go at once, then the `exited` update.
        for _ in 0..<(width + 2) { _ = try client.enqueuePrepared(SentryRecords.handled()) }
        client.endSentrySession()
        // The `ok` update goes alone and is accepted; the next `width` envelopes must then be in at once.
        mock.holdTogether(after: 1, together: width)
        #expect(await client.flush())
        let envelopes = mock.envelopes
        #expect(envelopes.count == width + 4)
        #expect(envelopes.map(\.inFlight).max() == width)  // several at once, never more than the bound
        #expect(envelopes.filter { !$0.sessions.isEmpty }.map(\.inFlight) == [1, 1])
        #expect(mock.sessions.map { $0["status"] } == ["ok", "exited"])
        #expect(mock.sessions.last?["errors"] == .int(width + 2))
        #expect(mock.storedEvents.count == width + 2)
        #expect(client.queuedCount == 0)
    }

    @Test func aFailureAmongEnvelopesInFlightLosesNothing() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makeSentryClient(mock, recorder: recorder) { $0.sessions = false }
        defer { client.shutdown() }
        let width = SentryDestination.maxEnvelopesInFlight
        let count = width + 3
        for _ in 0..<count { _ = try client.enqueuePrepared(SentryRecords.handled()) }
        // The first is accepted; of the next `width`, in flight together, the first answered is a 503.
        mock.holdTogether(after: 1, together: width)
        mock.then(.ok(), .status(503))
        #expect(await client.flush() == false)
        // What was accepted is no longer queued; the rest is, nothing dropped. The first went alone, then `width`
        // at once, of which only the one that met the 503 stays queued (more follow when the 503 was not the
        // oldest: the older ones' answers refill the window first). One at a time would store 1.
        let stored = mock.storedEvents.count
        #expect(stored >= width && stored < count)
        #expect(mock.envelopes.map(\.inFlight).max() == width)
        #expect(client.queuedCount == count - stored)
        #expect(recorder.retryDelays.count == 1)
        #expect(await client.flush())
        #expect(mock.storedEvents.count == count)
        #expect(client.queuedCount == 0)
    }
}
