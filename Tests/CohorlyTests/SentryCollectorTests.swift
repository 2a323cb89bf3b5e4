import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// The Sentry destination against the local collector's envelope endpoint (`cohorly serve`): crashes, handled
/// errors and sessions arrive, and a crash sent over both wires with the same key is one crash.
@Suite struct SentryCollectorTests {
    @Test func crashesErrorsAndSessionsReachTheCollector() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let port = collector.baseURL.port ?? 0
        var sentry = try SentryConfiguration(dsn: "http://test-token@127.0.0.1:\(port)/1")
        sentry.release = "App@1.2.0"
        sentry.compression = true
        let directory = temporaryDirectory()
        let client = Cohorly(sentry: sentry, options: testOptions(directory))
        defer { client.shutdown() }
        let crash = SentryRecords.crash()
        _ = try client.enqueuePrepared(crash)
        _ = try client.enqueuePrepared(SentryRecords.handled())
        client.endSentrySession()
        #expect(await client.flush())
        let events = try collector.store.events(matching: EventQuery(event: "$exception"))
        #expect(events.count == 2)
        let stored = try #require(events.first { $0.insertId == crash.insertId })
        #expect(stored.distinctId == "user-1")
        let sessions = try collector.store.records(kind: "sentry_session").compactMap { CohorlyValue(json: $0.json) }
        #expect(sessions.map { $0["status"] } == ["ok", "exited"])
        #expect(sessions.last?["errors"] == 1)
        // The same crash over the Cohorly wire, with the same key: still one crash.
        let cohorly = makeClient(collector)
        defer { cohorly.shutdown() }
        _ = try cohorly.enqueuePrepared(crash)
        #expect(await cohorly.flush())
        #expect(try collector.store.events(matching: EventQuery(insertId: crash.insertId)).count == 1)
    }
}
