import CohorlyCollector
import CohorlySQLite
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// Rows a version of the SDK cannot send (written by a newer or older one sharing the queue) are dropped, counted
/// and reported once; they never hold up the records that can be sent.
struct UnsendableRowsTests {
    @Test func fiveHundredUnknownRowsAheadOfARealEventDoNotStallIt() async throws {
        let directory = temporaryDirectory()
        let db = try SQLiteDatabase(path: directory.appendingPathComponent("queue.sqlite").path)
        try db.execute(
            """
            CREATE TABLE queue(
                id INTEGER PRIMARY KEY AUTOINCREMENT, endpoint TEXT NOT NULL, insert_id TEXT,
                body TEXT NOT NULL, prepared INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            """)
        try db.transaction {
            for index in 0..<500 {
                try db.execute(
                    "INSERT INTO queue(endpoint, insert_id, body, prepared) VALUES ('v9/future', NULL, '{\"n\":\(index)}', 0)"
                )
            }
        }
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, directory: directory, recorder: recorder) { $0.debug = false }
        defer { client.shutdown() }
        client.track("Real")
        #expect(await client.flush())
        let events = try collector.store.events(matching: EventQuery(limit: 10))
        #expect(events.map(\.event) == ["Real"])
        #expect(client.queuedCount == 0)
        let rows = try db.prepare("SELECT COUNT(*) FROM queue")
        var left: Int64 = -1
        try rows.rows { row in
            left = row.int(0)
            return false
        }
        #expect(left == 0)  // dropped, not skipped forever
        let notes = recorder.lines.filter { $0.contains("cannot send") }
        #expect(notes.count == 1, "\(recorder.lines)")
        #expect(notes.first?.contains("dropped 500 queued record(s)") == true, "\(notes)")
    }
}
