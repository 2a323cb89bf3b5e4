import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

@testable import CohorlyCrash

/// How a launch's Sentry session ends when CohorlyCrash watches it and the launch does not exit normally: the next
/// launch's CohorlyCrash gives the verdict from the launch marker — `exited` for a termination signal (a stop is
/// how a service is meant to end), `abnormal` with the abnormal-exit event for a kill -9. Real CrashDemo processes
/// (`scenario wait-for-signal`) with the Sentry destination, and the collector's envelope route over loopback.
@Suite struct SentrySessionEndTests {
    typealias Setup = AbnormalExitTests.Setup

    static func sentryEnvironment(_ setup: Setup) -> [String: String] {
        [
            "COHORLY_DESTINATION": "sentry",
            "COHORLY_SENTRY_DSN": "http://demo-token@127.0.0.1:\(setup.collector.baseURL.port ?? 0)/1",
        ]
    }

    static func sessions(_ setup: Setup) throws -> [CohorlyValue] {
        try setup.collector.store.records(kind: "sentry_session").compactMap { CohorlyValue(json: $0.json) }
    }

    @Test(arguments: [SIGTERM, SIGKILL])
    func aLaunchEndedBySignalEndsItsSessionAsTheNextLaunchFindsIt(signal: Int32) async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let environment = Self.sentryEnvironment(setup)
        let waiting = try setup.process(
            ["scenario", "wait-for-signal"],
            prefix: ["/usr/bin/env"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })
        try waiting.run()
        try await waitUntil("the launch marker exists") { setup.markers.count == 1 }
        kill(waiting.processIdentifier, signal)
        await waitForExit(waiting)
        #expect(waiting.terminationStatus == signal)
        let signalledAt = Int64(Date().timeIntervalSince1970 * 1000)

        let next = try await runCrashDemo(
            ["run"] + setup.clientArguments, reportDirectory: setup.reports, withClient: true, environment: environment)
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let all = try Self.sessions(setup)
        let first = try #require(all.first)
        let ended = all.filter { $0["sid"] == first["sid"] }
        #expect(ended.map { $0["init"] } == [true, false], "\(all)")
        #expect(ended.last?["started"] == first["started"])
        let started = try #require(first["started"]?.stringValue.flatMap(RFC3339.milliseconds))
        let abnormalExits = try setup.abnormalExits()
        if signal == SIGTERM {
            // Stopped: exited, its duration up to the signal; no event.
            #expect(ended.map { $0["status"] } == ["ok", "exited"], "\(all)")
            let duration = try #require(ended.last?["duration"]?.doubleValue)
            #expect(duration > 0 && duration <= Double(signalledAt - started) / 1000 + 0.001)
            #expect(abnormalExits.isEmpty)
        } else {
            // Killed: abnormal, with the abnormal-exit event (in the same envelope).
            #expect(ended.map { $0["status"] } == ["ok", "abnormal"], "\(all)")
            #expect(abnormalExits.count == 1)
        }
        // The next launch's (its `exited` too when a detached sender delivered it before the read).
        let others = all.filter { $0["sid"] != first["sid"] }.map { $0["status"] }
        #expect(others == ["ok"] || others == ["ok", "exited"], "\(all)")
    }
}
