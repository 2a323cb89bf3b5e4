import CohorlyCollector
import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Launches starting at the same moment in one storage directory (SentrySessions.start, SessionLock): each
/// takes the sessions of the launches that ended — in one write transaction of the queue, so none ends twice — and
/// never the session of the other, still running.
@Suite struct SentryLaunchRaceTests {
    @Test func twoLaunchesStartingTogetherEndEverySessionOnceAndNoRunningOne() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let dsn = "http://test-token@127.0.0.1:\(collector.baseURL.port ?? 0)/1"
        func launch(barrier: String?) throws -> (Process, LineReader) {
            try DurabilityTests.launch(
                [
                    "session", "--sentry", dsn, "--host", "http://127.0.0.1:9", "--dir", directory.path, "--end",
                    "wait",
                ] + (barrier.map { ["--barrier", $0] } ?? []))
        }
        // A launch killed with its session open: the two next ones both find it.
        let (killed, killedOutput) = try launch(barrier: nil)
        #expect(await killedOutput.next() == "started")
        kill(killed.processIdentifier, SIGKILL)
        await waitForExit(killed)
        // Two launches held at a barrier (this test holds its flock) and released together.
        let barrier = directory.appendingPathComponent("barrier").path
        let held = open(barrier, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(held >= 0 && flock(held, LOCK_EX) == 0)
        let (first, firstOutput) = try launch(barrier: barrier)
        let (second, secondOutput) = try launch(barrier: barrier)
        #expect(await firstOutput.next() == "ready")
        #expect(await secondOutput.next() == "ready")
        let released = Int64(Date().timeIntervalSince1970 * 1000)
        flock(held, LOCK_UN)
        close(held)
        #expect(await firstOutput.next() == "started")
        #expect(await secondOutput.next() == "started")
        // Both run: neither may take the other's session. Then both are killed.
        for app in [first, second] {
            kill(app.processIdentifier, SIGKILL)
            await waitForExit(app)
        }
        let killedAt = Int64(Date().timeIntervalSince1970 * 1000)
        var sentry = try SentryConfiguration(dsn: dsn)
        sentry.release = "App@2.0.0"
        let next = Cohorly(sentry: sentry, options: testOptions(directory))
        defer { next.shutdown() }
        #expect(await next.flush())
        let all = try collector.store.records(kind: "sentry_session").compactMap { CohorlyValue(json: $0.json) }
        func time(_ update: CohorlyValue, _ field: String) -> Int64 {
            update[field]?.stringValue.flatMap(RFC3339.milliseconds) ?? 0
        }
        // The sessions by their start: the killed launch's, the two launches', this one's.
        let starts = all.filter { $0["init"] == true }.sorted { time($0, "started") < time($1, "started") }
        #expect(starts.count == 4, "\(all)")
        let updates = starts.map { start in all.filter { $0["sid"] == start["sid"] } }
        #expect(all.count == 7, "\(all)")
        // The three killed ones ended once each, abnormal; this launch's is open.
        #expect(
            updates.map { $0.compactMap { $0["status"]?.stringValue } } == [
                ["ok", "abnormal"], ["ok", "abnormal"], ["ok", "abnormal"], ["ok"],
            ])
        // The first was ended by one of the two launches; theirs once they were killed, not while they ran.
        #expect(updates.first.map { time($0[$0.count - 1], "timestamp") >= released } == true)
        for ended in updates.dropFirst().prefix(2) {
            #expect(time(ended[ended.count - 1], "timestamp") >= killedAt, "\(ended)")
        }
        // No lock file is left for the sessions that ended.
        let locks = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("sentry-") && $0.hasSuffix(".lock")
        }
        #expect(locks.count == 1)  // the running launch's own
    }
}
