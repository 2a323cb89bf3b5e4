import Cohorly
import CohorlyCrash
import CohorlyLaunch
import Foundation
import TestWaiting
import Testing

/// The launch protocol (docs/internals.md "The launch protocol") with real processes racing: launches of
/// CrashDemo, the senders they and their crashes start, and senders killed with SIGKILL. A crash is sent once —
/// one request carries it, the destination takes it once — and never lost; a lock left by a killed process blocks
/// no one.
@Suite struct LaunchProtocolTests {
    /// One app install: its queue and report directories, and where it sends.
    struct Install {
        let destination: CountingDestination
        let root: URL
        var storage: URL { root.appendingPathComponent("storage") }
        var reports: URL { root.appendingPathComponent("reports") }

        init(_ mode: CountingDestination.Mode) throws {
            destination = try CountingDestination(mode)
            root = try makeTemporaryDirectory("launch-protocol")
        }

        /// A launch of CrashDemo; its crash starts the crash-time sender when `senderAtCrash`.
        func launch(_ arguments: [String], senderAtCrash: Bool = false) async throws -> CrashDemoRun {
            try await runCrashDemo(
                arguments + ["--storage", storage.path, "--sender-timeout-ms", "20000"], reportDirectory: reports,
                withClient: true,
                environment: ["COHORLY_HOST": destination.url.absoluteString, "COHORLY_TOKEN": "demo-token"],
                senderAtCrash: senderAtCrash)
        }

        /// A crash whose report waits for the next launch (no sender at crash); returns its `$insert_id`.
        func pendingCrash() async throws -> String {
            let crash = try await launch(["crash", "null-write"])
            #expect(crash.signal == SIGSEGV)
            return try #require(try crash.reports().first).insertId.lowercased()
        }

        /// A crash (null-write) whose crash-time sender's request the destination (`.hold`) holds: returns once
        /// `sender`'s request arrived, with the crash's `$insert_id` as the destination received it.
        func crashHeldMidDelivery(_ sender: String) async throws -> String {
            let crash = try await launch(["crash", "null-write"], senderAtCrash: true)
            #expect(crash.signal == SIGSEGV)
            try await waitUntil("\(sender) request reached the destination", seconds: 60) { destination.held == 1 }
            return try #require(destination.insertIds.first)
        }

        /// Two crashes arrived, each taken once, and nothing is left to send them again.
        var twoCrashesTakenOnceAndSettled: Bool {
            destination.insertIds.count == 2 && destination.insertIds.allSatisfy { destination.accepted($0) == 1 }
                && settled
        }

        /// The crash reports left in the report directory.
        var reportsLeft: [CrashReportStore.ReportFile] { CrashReportStore(directory: reports).pendingReports() }

        /// Nothing is left to send it again: no sender runs, no report is left.
        var settled: Bool { DetachedSenders.running(under: root).isEmpty && reportsLeft.isEmpty }

        func finish() {
            removeLaunchDirectory(root)
            destination.stop()
        }
    }

    /// How long the destination takes to answer: at once (a process that turned the report into an event after
    /// another's was delivered would queue and send it again: `crash-delivery.lock`), or a second (two processes
    /// sending the queue at once overlap: `queue.lock`).
    static let answerDelays = [0.0, 1.0]

    /// Two launches starting at once find one pending report: each hands it to a detached sender and turns it
    /// into an event. It is sent once (the report is turned into one event: `crash-delivery.lock`; the queue is
    /// sent by one process at a time: `queue.lock`).
    @Test(arguments: answerDelays) func twoLaunchesStartingAtOnceSendAPendingCrashOnce(answerDelay: Double)
        async throws
    {
        let install = try Install(.answer(delay: answerDelay))
        defer { install.finish() }
        let crash = try await install.pendingCrash()

        async let first = install.launch(["run"])
        async let second = install.launch(["run"])
        let (a, b) = try await (first, second)
        #expect(a.exitStatus == 0 && b.exitStatus == 0, "\(a.stdout) \(a.stderr) | \(b.stdout) \(b.stderr)")
        #expect(await eventually(timeout: 60) { install.destination.accepted(crash) >= 1 && install.settled })
        #expect(install.destination.received(crash) == 1)
        #expect(install.destination.accepted(crash) == 1)
        #expect(install.destination.overlaps == 0)
    }

    /// The crash-time sender of a crash and the next launch, started at once, race for the report: it is sent
    /// once.
    @Test(arguments: answerDelays) func theCrashTimeSenderAndTheNextLaunchSendACrashOnce(answerDelay: Double)
        async throws
    {
        let install = try Install(.answer(delay: answerDelay))
        defer { install.finish() }
        let crash = try await install.launch(["crash", "null-write"], senderAtCrash: true)
        #expect(crash.signal == SIGSEGV)
        let next = try await install.launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(await eventually(timeout: 60) { install.destination.insertIds.count == 1 && install.settled })
        let insertId = try #require(install.destination.insertIds.first)
        #expect(install.destination.received(insertId) == 1)
        #expect(install.destination.accepted(insertId) == 1)
        #expect(install.destination.overlaps == 0)
    }

    /// The crash-time sender is killed (SIGKILL) while the destination holds its request: the crash is not lost —
    /// its record stays queued until a destination took it — and the next launch, not blocked by the locks the
    /// dead sender held (`crash-sender.lock`, `queue.lock`: the kernel dropped them), sends it once.
    @Test func aSenderKilledMidDeliveryLeavesTheCrashToTheNextLaunch() async throws {
        let install = try Install(.hold)
        defer { install.finish() }
        let insertId = try await install.crashHeldMidDelivery("the crash-time sender's")
        #expect(DetachedSenders.stop(under: install.root))
        install.destination.release(status: 503)  // its client is dead: the destination never took it

        let next = try await install.launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(await eventually(timeout: 60) { install.destination.accepted(insertId) >= 1 && install.settled })
        #expect(install.destination.received(insertId) == 2)  // the killed sender's, then the next launch's
        #expect(install.destination.accepted(insertId) == 1)
    }

    /// A sender killed while it held every lock of the queue (its turn, the delivery, the queue) blocks no later
    /// one: the next crash's own sender delivers both crashes, each once, with no launch in between.
    @Test func aLockLeftByAKilledSenderDoesNotBlockTheNextCrashsSender() async throws {
        let install = try Install(.hold)
        defer { install.finish() }
        let firstId = try await install.crashHeldMidDelivery("the first crash's sender's")
        let sender = try #require(DetachedSenders.running(under: install.root).first)
        #expect(DetachedSenders.has(sender, open: install.storage.appendingPathComponent("queue.lock").path))
        #expect(DetachedSenders.stop(under: install.root))
        install.destination.release(status: 503)

        let second = try await install.launch(["crash", "fatal-error"], senderAtCrash: true)
        #expect(second.signal == SIGILL)
        #expect(await eventually(timeout: 60) { install.twoCrashesTakenOnceAndSettled })
        let secondId = try #require(install.destination.insertIds.subtracting([firstId]).first)
        #expect(install.destination.accepted(firstId) == 1)
        #expect(install.destination.received(secondId) == 1)
        #expect(!LockFile.isHeld(.queue, in: install.storage.path))
        #expect(!LockFile.isHeld(.crashSender, in: install.storage.path))
    }

    /// Senders of one queue take turns (`crash-sender.lock`): while the first crash's sender is mid-delivery (the
    /// destination holds its request), the second crash's sender leaves its report alone — it neither turns it
    /// into an event nor tries the queue, whose lock would fail it into the retry backoff — and once the first is
    /// done it delivers its crash, each crash once, with no launch in between.
    @Test func aSecondCrashsSenderWaitsForTheFirstSendersTurn() async throws {
        let install = try Install(.hold)
        defer { install.finish() }
        let firstId = try await install.crashHeldMidDelivery("the first crash's sender's")
        let firstSender = try #require(DetachedSenders.running(under: install.root).first)
        #expect(install.reportsLeft.isEmpty)  // the first sender turned its report into an event

        let second = try await install.launch(["crash", "fatal-error"], senderAtCrash: true)
        #expect(second.signal == SIGILL)
        let turn = install.storage.appendingPathComponent(LaunchLock.crashSender.fileName).path
        // The second sender waits for its turn, or (were there no turns) has taken its report over.
        try await waitUntil("the second crash's sender waits for its turn or took its report", seconds: 60) {
            DetachedSenders.running(under: install.root).contains {
                $0 != firstSender && DetachedSenders.has($0, open: turn)
            } || install.reportsLeft.isEmpty
        }
        #expect(install.reportsLeft.count == 1, "the second sender took its report over during the first's turn")
        #expect(install.destination.insertIds == [firstId])

        install.destination.release(status: 200)
        #expect(await eventually(timeout: 60) { install.twoCrashesTakenOnceAndSettled })
        let secondId = try #require(install.destination.insertIds.subtracting([firstId]).first)
        #expect(install.destination.received(firstId) == 1)
        #expect(install.destination.received(secondId) == 1)
        #expect(install.destination.overlaps == 0)
    }

    /// Every move of the protocol's state machine is in docs/internals.md's table, with its lock.
    @Test func theDocumentedStateMachineIsTheCodes() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/internals.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## The launch protocol").dropFirst().first)
        for move in LaunchProtocol.transitions {
            let row = "| \(move.from) | \(move.to) | \(move.mover.rawValue) | \(move.lock ?? "—") |"
            #expect(section.contains(row), "docs/internals.md lacks \(row)")
        }
        for lock in [LaunchLock.queue, .crashSender, .crashDelivery, .reportDirectory] {
            #expect(section.contains("`\(lock.fileName)`"), "docs/internals.md lacks \(lock.fileName)")
        }
    }
}
