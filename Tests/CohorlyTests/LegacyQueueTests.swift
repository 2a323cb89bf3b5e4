import CohorlyCollector
import CohorlySQLite
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// Queues written before the queue held wire-neutral records (each row named its endpoint and held that wire's
/// JSON) are read after the upgrade: nothing queued before it is lost, whichever destination sends it.
@Suite struct LegacyQueueTests {
    /// A queue directory whose database has the previous schema (a row's kind in `endpoint`) and holds `rows`
    /// (the `VALUES` list of `INSERT INTO queue(endpoint, insert_id, body, prepared)`).
    func queueOfThePreviousSchema(_ rows: String) throws -> URL {
        let directory = temporaryDirectory()
        let db = try SQLiteDatabase(path: directory.appendingPathComponent("queue.sqlite").path)
        try db.execute(
            """
            CREATE TABLE queue(
                id INTEGER PRIMARY KEY AUTOINCREMENT, endpoint TEXT NOT NULL, insert_id TEXT,
                body TEXT NOT NULL, prepared INTEGER NOT NULL DEFAULT 0);
            CREATE INDEX queue_prepared_insert_id ON queue(insert_id) WHERE prepared = 1;
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            INSERT INTO queue(endpoint, insert_id, body, prepared) VALUES \(rows);
            """)
        return directory
    }

    /// A queue as the previous version left it: a `/track` event, a prepared `$exception`, a PostHog capture item,
    /// an `/engage` operation and an `/alias` link.
    func legacyQueue() throws -> URL {
        try queueOfThePreviousSchema(
            """
              ('track', 'ins-1',
               '{"event":"old track","properties":{"distinct_id":"u1","time":1796032800000,"$insert_id":"ins-1","k":"v"}}',
               0),
              ('track', 'crash-1',
               '{"event":"$exception","properties":{"distinct_id":"u1","time":1796032801000,"$insert_id":"crash-1","$exception_type":"SIGSEGV"}}',
               1),
              ('i/v1/analytics/events', '0190a6b4-0000-7000-8000-000000000001',
               '{"event":"old capture","uuid":"0190a6b4-0000-7000-8000-000000000001","distinct_id":"u1","timestamp":"2026-11-30T10:00:02.000Z","options":{},"properties":{"k":"w"}}',
               0),
              ('engage', NULL, '{"distinct_id":"u1","$set":{"plan":"pro"}}', 0),
              ('alias', NULL, '{"alias":"anon-1","distinct_id":"u1"}', 0)
            """)
    }

    @Test func rowsOfThePreviousVersionAreSentToTheCohorlyAPI() async throws {
        let directory = try legacyQueue()
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector, directory: directory)
        defer { client.shutdown() }
        #expect(client.queuedCount == 5)
        #expect(await client.flush())
        let events = try collector.store.events(matching: EventQuery(limit: 10))
        #expect(Set(events.map(\.event)) == ["old track", "$exception", "old capture"])
        let capture = try #require(events.first { $0.event == "old capture" })
        #expect(capture.insertId == "0190a6b4-0000-7000-8000-000000000001")
        #expect(capture.time == 1_796_032_802_000)
        #expect(events.first { $0.event == "$exception" }?.insertId == "crash-1")
        let engage = try collector.store.records(kind: "engage").map { CohorlyValue(json: $0.json) }
        #expect(engage == [["distinct_id": "u1", "$set": ["plan": "pro"]]])
        let aliases = try collector.store.records(kind: "alias").map { CohorlyValue(json: $0.json) }
        #expect(aliases == [["alias": "anon-1", "distinct_id": "u1"]])
        #expect(client.queuedCount == 0)
    }

    /// A queue as today's code wrote it before the `endpoint` column was named `kind` and the launch records' kind
    /// `launch`: an event and a Sentry session update (kind `session`), as `SentrySession.record` writes it.
    func sessionQueue() throws -> URL {
        try queueOfThePreviousSchema(
            """
              ('event', 'ins-1',
               '{"event":"old event","properties":{"distinct_id":"u1","time":1796032800000,"$insert_id":"ins-1"}}', 0),
              ('session', NULL,
               '{"sid":"5b3c1e2a-0000-4000-8000-000000000001","did":"u1","init":false,"started":"2026-11-30T10:00:00.000Z","timestamp":"2026-11-30T10:00:05.000Z","status":"exited","errors":0,"duration":5.0,"attrs":{"release":"app@0.9","environment":"production"}}',
               1)
            """)
    }

    /// The queue's columns, by name.
    func columns(_ directory: URL) throws -> [String] {
        let db = try SQLiteDatabase(path: directory.appendingPathComponent("queue.sqlite").path)
        var names: [String] = []
        try db.prepare("SELECT name FROM pragma_table_info('queue') ORDER BY cid").rows { row in
            names.append(row.text(0) ?? "")
            return true
        }
        return names
    }

    @Test func aSessionRowOfThePreviousVersionIsSentToSentryAndTheColumnIsRenamed() async throws {
        let directory = try sessionQueue()
        #expect(try columns(directory).contains("endpoint"))
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock, directory: directory) { $0.sessions = false }
        defer { client.shutdown() }
        #expect(try columns(directory) == ["id", "kind", "insert_id", "body", "prepared"])
        #expect(await client.flush())
        #expect(mock.sessions.map { $0["sid"] } == ["5b3c1e2a-0000-4000-8000-000000000001"])
        #expect(mock.sessions.first?["status"] == "exited")
        #expect(client.queuedCount == 0)
    }

    @Test func aSessionRowOfThePreviousVersionIsDroppedByTheCohorlyAPI() async throws {
        let directory = try sessionQueue()
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector, directory: directory)
        defer { client.shutdown() }
        #expect(client.queuedCount == 2)
        #expect(await client.flush())
        let events = try collector.store.events(matching: EventQuery(limit: 10))
        #expect(events.map(\.event) == ["old event"])
        #expect(client.queuedCount == 0)
    }

    @Test func rowsOfThePreviousVersionAreSentToPostHog() async throws {
        let directory = try legacyQueue()
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock, directory: directory)
        defer { client.shutdown() }
        #expect(await client.flush())
        let items = mock.requests.flatMap(\.batch)
        #expect(
            items.compactMap { $0["event"]?.stringValue }
                == ["old track", "$exception", "old capture", "$set", "$create_alias"])
        #expect(items[2]["uuid"] == "0190a6b4-0000-7000-8000-000000000001")
        #expect(items[2]["timestamp"] == "2026-11-30T10:00:02.000Z")
        #expect(items[3]["properties"]?["$set"] == ["plan": "pro"])
        #expect(items[4]["properties"]?["alias"] == "anon-1")
        #expect(client.queuedCount == 0)
    }
}
