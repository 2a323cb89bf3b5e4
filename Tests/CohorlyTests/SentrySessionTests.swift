import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Release health through real launches (CohorlyTestApp): one session per launch, `ok` at its start, `exited` at a
/// normal exit, `abnormal` (with the abnormal-exit event) after a kill -9 of a launch a crash monitor watched,
/// `crashed` in the crash event's envelope; every update through the persisted queue. The crash itself, from
/// CrashDemo, is in CohorlyCrashTests; launches no monitor watched in SentryLaunchEndTests.
@Suite struct SentrySessionTests {
    /// Runs one launch of the test app with the Sentry destination; `end` is `exit` or `wait` (then killed -9);
    /// `monitor`: as watched by a crash monitor that knows it by that id (as CohorlyCrash does).
    func launch(_ mock: MockSentry, directory: URL, end: String, monitor: String? = nil) async throws {
        let (app, output) = try DurabilityTests.launch(
            [
                "session", "--sentry", mock.dsn(), "--host", "http://127.0.0.1:9", "--dir", directory.path, "--end",
                end,
            ] + (monitor.map { ["--monitor", $0] } ?? []))
        #expect(await output.next() == "started")
        if end == "wait" { kill(app.processIdentifier, SIGKILL) }
        await waitForExit(app)
        #expect(app.terminationReason == (end == "wait" ? .uncaughtSignal : .exit))
    }

    @Test func aNormalExitEndsTheSessionAsExited() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let directory = temporaryDirectory()
        try await launch(mock, directory: directory, end: "exit")
        #expect(mock.envelopes.isEmpty)  // the launch sent nothing: its updates wait in the queue
        let next = try makeSentryClient(mock, directory: directory)
        defer { next.shutdown() }
        #expect(await next.flush())
        let sessions = mock.sessions
        #expect(sessions.count == 3)  // the first launch's ok and exited, this launch's ok
        let first = sessions.filter { $0["sid"] == sessions[0]["sid"] }
        #expect(first.map { $0["status"] } == ["ok", "exited"])
        #expect(first.map { $0["init"] } == [true, false])
        #expect(first[1]["errors"] == 0)
        #expect(first[1]["attrs"]?["environment"] == "production")
        #expect(first[1]["did"] != nil)
        #expect(sessions[2]["sid"] != sessions[0]["sid"])
        #expect(sessions[2]["init"] == true)
        // Sent in one envelope (up to 100 session items each).
        #expect(mock.envelopes.count == 1)
        #expect(mock.envelopes[0].framingError == nil)
        #expect(mock.envelopes[0].header["event_id"] == nil)
    }

    @Test func aKilledLaunchEndsAbnormalWithItsAbnormalExitEvent() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let directory = temporaryDirectory()
        let killedLaunch = UUID().uuidString.lowercased()
        try await launch(mock, directory: directory, end: "wait", monitor: killedLaunch)
        // The kill came after the killed launch's session started: its time is taken once the launch is over.
        let killed = Int64(Date().timeIntervalSince1970 * 1000)
        let next = try makeSentryClient(mock, directory: directory)
        defer { next.shutdown() }
        // CohorlyCrash's launch marker finds the kill and queues the abnormal-exit event (here: by hand), with the
        // launch's insert id: the one its session waits under.
        _ = try next.enqueuePrepared(SentryRecords.abnormalExit(killedLaunch, at: killed))
        #expect(await next.flush())
        let envelope = try #require(mock.envelopes.first { !$0.events.isEmpty })
        #expect(envelope.items.map { $0.header["type"] } == ["event", "session"])
        let session = try #require(envelope.sessions.first)
        #expect(session["status"] == "abnormal")
        #expect(session["init"] == false)
        let killedSid = session["sid"]
        #expect(mock.sessions.filter { $0["sid"] == killedSid }.map { $0["status"] } == ["ok", "abnormal"])
        let refused = try await relayErrors(mock.events)
        #expect(refused == [], "\(refused)")
        // The previous session ends once: a second fatal event carries none.
        _ = try next.enqueuePrepared(SentryRecords.abnormalExit(at: killed + 100))
        #expect(await next.flush())
        #expect(mock.envelopes.last?.sessions.isEmpty == true)
    }

    @Test func aCrashEndsThePreviousSessionAsCrashedInTheCrashEnvelope() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let directory = temporaryDirectory()
        let crashed = try makeSentryClient(mock, directory: directory)
        crashed.crashMonitorStarted(launchId: SentryRecords.crash().insertId)  // as CohorlyCrash.install does
        // The crash happens in that launch, after its session started.
        let crashTime = Int64(Date().timeIntervalSince1970 * 1000)
        crashed.shutdown()  // a launch that ended without a normal exit: its session stays open
        let next = try makeSentryClient(mock, directory: directory)
        defer { next.shutdown() }
        _ = try next.enqueuePrepared(SentryRecords.crash(at: crashTime))
        #expect(await next.flush())
        let envelope = try #require(mock.envelopes.first { !$0.events.isEmpty })
        #expect(envelope.items.map { $0.header["type"] } == ["event", "session"])
        #expect(envelope.sessions.first?["status"] == "crashed")
        #expect(envelope.sessions.first?["errors"] == 1)
    }

    /// Issue 41.10: the release given to the crash monitor (`CohorlyCrash.install(cohorly:release:)`) is the one the
    /// launch's events carry, so every update of the launch's session carries it — the first, queued before the
    /// monitor was installed, included — and so does the crashed update in the next launch's crash envelope.
    @Test func theReleaseGivenToTheCrashMonitorIsEveryUpdatesRelease() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let directory = temporaryDirectory()
        let unset: (inout SentryConfiguration) -> Void = {
            $0.release = nil
            $0.environment = "staging"
        }
        // A launch that ends normally, then one that crashes, both monitored with release App@3.1.
        let exited = try makeSentryClient(mock, directory: directory, unset)
        exited.crashMonitorStarted(launchId: UUID().uuidString.lowercased(), release: "App@3.1")
        exited.endSentrySession()
        exited.shutdown()
        let crashed = try makeSentryClient(mock, directory: directory, unset)
        crashed.crashMonitorStarted(launchId: SentryRecords.crash().insertId, release: "App@3.1")
        let crashTime = Int64(Date().timeIntervalSince1970 * 1000)
        crashed.shutdown()
        let next = try makeSentryClient(mock, directory: directory, unset)
        defer { next.shutdown() }
        var crash = SentryRecords.crash(at: crashTime)
        crash.properties["release"] = "App@3.1"
        _ = try next.enqueuePrepared(crash)
        #expect(await next.flush())
        let envelope = try #require(mock.envelopes.first { !$0.events.isEmpty })
        #expect(envelope.events.first?["release"] == "App@3.1")
        #expect(envelope.sessions.first?["status"] == "crashed")
        let monitored = mock.sessions.filter { $0["attrs"]?["release"] == "App@3.1" }
        #expect(monitored.map { $0["status"] } == ["ok", "exited", "ok", "crashed"], "\(mock.sessions)")
        #expect(mock.sessions.allSatisfy { $0["attrs"]?["environment"] == "staging" })
        // The next launch, unmonitored, keeps the destination's default release.
        let defaultRelease = try SentryConfiguration(dsn: mock.dsn()).sessionRelease
        #expect(mock.sessions.filter { $0["status"] == "ok" }.last?["attrs"]?["release"] == .string(defaultRelease))
    }

    @Test func handledErrorsButNotMessagesCountInTheSession() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock)
        defer { client.shutdown() }
        for record in [SentryRecords.handled(), SentryRecords.handled(), SentryRecords.message()] {
            client.reserveLiveEvent()?.fulfill(record)
        }
        client.endSentrySession()
        #expect(await client.flush())
        let exited = try #require(mock.sessions.first { $0["status"] == "exited" })
        #expect(exited["errors"] == 2)  // messages do not count
    }

    @Test func resetKeepsTheSessionUpdates() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock)
        defer { client.shutdown() }
        client.reset()
        client.endSentrySession()
        #expect(await client.flush())
        #expect(mock.sessions.map { $0["status"] } == ["ok", "exited"])
    }
}
