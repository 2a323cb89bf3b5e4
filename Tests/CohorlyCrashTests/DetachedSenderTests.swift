import Foundation
import TestWaiting
import Testing

@testable import CohorlyCrash

/// The detached sender (`CrashEventSender`) as a real process, around the queue it was started for.
@Suite struct DetachedSenderTests {
    /// The app's data was deleted while the sender waited for its turn: the sender ends without making the queue's
    /// directory again (its client used to create it and its parents) and without sending anything twice.
    @Test func aSenderWhoseQueueWasRemovedEndsWithoutMakingItAgain() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["crash", "fatal-error"])
        #expect(crash.signal == SIGILL)
        // Holding the senders' turn: the next launch's sender waits for it, its lock file open.
        let turnPath = setup.storage.appendingPathComponent("crash-sender.lock").path
        let turn = open(turnPath, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        try #require(turn >= 0 && flock(turn, LOCK_EX) == 0)
        var released = false
        defer { if !released { close(turn) } }
        let next = try await setup.launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stderr)")
        #expect(try setup.exceptions().count == 1)  // the launch delivered its crash itself
        var sender: pid_t?
        try await waitUntil("the sender waits for its turn") {
            sender = DetachedSenders.running(under: setup.root).first { DetachedSenders.has($0, open: turnPath) }
            return sender != nil
        }

        try FileManager.default.removeItem(at: setup.storage)
        close(turn)
        released = true
        try await waitUntil("the sender ended") { DetachedSenders.running(under: setup.root).isEmpty }
        #expect(!FileManager.default.fileExists(atPath: setup.storage.path))
        #expect(try setup.exceptions().count == 1)
    }
}
