import CohorlyCollector
import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// How the next launch ends a session its launch left open, without CohorlyCrash: the client alone keeps the open
/// session on disk, so a launch killed with kill -9 (OOM, power loss) ends `abnormal` when the next one starts —
/// the same sid, its `started` and handled errors, `init` false, no duration (the end was not seen). With a crash
/// monitor watching the launch, the end waits for its verdict (CohorlyCrash's tests: SentrySessionEndTests).
@Suite struct SentryLaunchEndTests {
    /// One launch of the test app with the Sentry destination to `collector`, killed with SIGKILL once its session
    /// (with `errors` handled errors) is on disk.
    func launchAndKill(_ collector: Collector, directory: URL, errors: Int, monitor: String? = nil) async throws {
        let (app, output) = try DurabilityTests.launch(
            [
                "session", "--sentry", "http://test-token@127.0.0.1:\(collector.baseURL.port ?? 0)/1", "--host",
                "http://127.0.0.1:9", "--dir", directory.path, "--end", "wait", "--errors", String(errors),
            ] + (monitor.map { ["--monitor", $0] } ?? []))
        #expect(await output.next() == "started")
        kill(app.processIdentifier, SIGKILL)
        await waitForExit(app)
        #expect(app.terminationReason == .uncaughtSignal)
    }

    func nextLaunch(_ collector: Collector, directory: URL) throws -> Cohorly {
        var sentry = try SentryConfiguration(dsn: "http://test-token@127.0.0.1:\(collector.baseURL.port ?? 0)/1")
        sentry.release = "App@2.0.0"
        return Cohorly(sentry: sentry, options: testOptions(directory))
    }

    func sessions(_ collector: Collector) throws -> [CohorlyValue] {
        try collector.store.records(kind: "sentry_session").compactMap { CohorlyValue(json: $0.json) }
    }

    @Test func aLaunchKilledWithoutACrashMonitorEndsAbnormalWhenTheNextStarts() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        try await launchAndKill(collector, directory: directory, errors: 2)
        let killedAt = Int64(Date().timeIntervalSince1970 * 1000)
        let next = try nextLaunch(collector, directory: directory)
        #expect(await next.flush())
        let all = try sessions(collector)
        let killedSid = try #require(all.first?["sid"])
        let killed = all.filter { $0["sid"] == killedSid }
        #expect(killed.map { $0["status"] } == ["ok", "abnormal"], "\(all)")
        #expect(killed.map { $0["init"] } == [true, false])
        #expect(killed[0]["errors"] == 0)
        #expect(killed.last?["errors"] == 2)  // the handled errors queued before the kill count
        #expect(killed.last?["started"] == killed[0]["started"])
        let started = try #require(killed[0]["started"]?.stringValue.flatMap(RFC3339.milliseconds))
        #expect(started >= before && started <= killedAt)
        #expect(killed.last?["duration"] == nil)  // the end was not seen: no duration is made up
        #expect(killed.last?["did"] == killed[0]["did"])
        #expect(killed.last?["attrs"]?["release"] == killed[0]["attrs"]?["release"])
        let ended = try #require(killed.last?["timestamp"]?.stringValue.flatMap(RFC3339.milliseconds))
        #expect(ended >= killedAt)  // found by the next launch
        // The next launch's own session, and nothing else: the killed one ends once.
        #expect(all.count == 3)
        #expect(all.filter { $0["sid"] != killedSid }.map { $0["status"] } == ["ok"])
        #expect(try collector.store.events(matching: EventQuery(event: "$exception")).count == 2)
        // The launch after a normal exit of this one ends nothing more.
        next.endSentrySession()
        #expect(await next.flush())
        next.shutdown()
        let third = try nextLaunch(collector, directory: directory)
        defer { third.shutdown() }
        #expect(await third.flush())
        #expect(try sessions(collector).map { $0["status"] } == ["ok", "abnormal", "ok", "exited", "ok"])
    }

    @Test func aMonitoredLaunchWaitsForItsVerdictAndEndsAbnormalWhenTheMonitorFindsNothing() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        try await launchAndKill(collector, directory: directory, errors: 0, monitor: "launch-1")
        // This launch has no monitor: nobody tells how the killed one ended, so it waits…
        let second = try nextLaunch(collector, directory: directory)
        #expect(await second.flush())
        let killedSid = try #require(try sessions(collector).first?["sid"])
        #expect(try sessions(collector).filter { $0["sid"] == killedSid }.map { $0["status"] } == ["ok"])
        second.shutdown()  // ended without a normal exit, unmonitored: abnormal when the next starts
        // …until a launch's monitor finds no report and no marker of it; one still pending waits on.
        let third = try nextLaunch(collector, directory: directory)
        defer { third.shutdown() }
        third.previousLaunchesExamined { $0 == "launch-still-running" }
        #expect(await third.flush())
        let all = try sessions(collector)
        #expect(all.filter { $0["sid"] == killedSid }.map { $0["status"] } == ["ok", "abnormal"])
        #expect(all.filter { $0["status"] == "abnormal" }.count == 2)
        #expect(all.filter { $0["status"] == "ok" }.count == 3)
    }

    @Test func sessionsWaitingForVerdictsEndEachByItsLaunch() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        // Three monitored launches end without a normal exit before any verdict comes (their crash reports are
        // still being symbolicated, say).
        for launch in ["launch-1", "launch-2", "launch-3"] {
            let client = try nextLaunch(collector, directory: directory)
            client.crashMonitorStarted(launchId: launch)
            client.shutdown()
        }
        let next = try nextLaunch(collector, directory: directory)
        defer { next.shutdown() }
        next.previousLaunchExited(launchId: "launch-2", atMs: Int64(Date().timeIntervalSince1970 * 1000))
        // launch-1's crash event arrives late and still ends its own session, in its envelope.
        var crash = SentryRecords.crash("launch-1", at: Int64(Date().timeIntervalSince1970 * 1000))
        crash.properties["release"] = "App@2.0.0"
        _ = try next.enqueuePrepared(crash)
        next.previousLaunchesExamined { _ in false }  // launch-3: nothing of it found
        #expect(await next.flush())
        let all = try sessions(collector)
        let sids = all.filter { $0["init"] == true }.compactMap { $0["sid"] }
        #expect(sids.count == 4)
        let statuses = sids.map { sid in all.filter { $0["sid"] == sid }.compactMap { $0["status"]?.stringValue } }
        #expect(statuses == [["ok", "crashed"], ["ok", "exited"], ["ok", "abnormal"], ["ok"]], "\(all)")
    }

    @Test func aMonitorsVerdictEndsThePreviousSession() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let stopped = try nextLaunch(collector, directory: directory)
        stopped.crashMonitorStarted(launchId: "launch-1")
        stopped.shutdown()  // stopped by SIGTERM: no normal exit
        let next = try nextLaunch(collector, directory: directory)
        defer { next.shutdown() }
        let stoppedAt = Int64(Date().timeIntervalSince1970 * 1000)
        next.previousLaunchExited(launchId: "launch-0", atMs: stoppedAt)  // another launch's verdict: no change
        next.previousLaunchExited(launchId: "launch-1", atMs: stoppedAt)
        next.previousLaunchesExamined { _ in false }  // already ended: nothing more
        #expect(await next.flush())
        let all = try sessions(collector)
        let first = all.filter { $0["sid"] == all[0]["sid"] }
        #expect(first.map { $0["status"] } == ["ok", "exited"])
        let duration = try #require(first.last?["duration"]?.doubleValue)
        let started = try #require(first[0]["started"]?.stringValue.flatMap(RFC3339.milliseconds))
        #expect(abs(duration - Double(stoppedAt - started) / 1000) < 0.002)
    }
}
