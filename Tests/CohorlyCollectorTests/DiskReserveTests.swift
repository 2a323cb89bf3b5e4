import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// An upload cannot take the free space ingestion needs: it stops at the reserve with 507 and its reason, and
/// events are still taken; a database that is full answers 507, not 500.
@Suite struct DiskReserveTests {
    @Test func anUploadWithoutADeclaredSizeStopsAtTheFreeSpaceFloor() throws {
        let collector = try startCollector { $0.diskReserveBytes = 64 << 20 }
        defer { collector.stop() }
        // A disk with 8 MiB free above the reserve, less what uploads wrote: an upload inflating to 64 MiB stops
        // once it has written about 8 MiB.
        let temporary = collector.debugFiles.root.appendingPathComponent("tmp").path
        collector.debugFiles.freeBytesOverride = {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
            let written = names.reduce(Int64(0)) { total, name in
                var info = stat()
                return total + (stat(temporary + "/" + name, &info) == 0 ? Int64(info.st_size) : 0)
            }
            return (64 << 20) + (8 << 20) - written
        }
        let reply = UploadLimitTests.put(
            collector, try UploadLimitTests.zeros(64 << 20), [("Content-Encoding", "deflate")])
        #expect(reply.status == 507, "\(reply.text)")
        #expect(reply.body?["error"]?.stringValue?.contains("kept for ingestion") == true, "\(reply.text)")
        #expect(DebugFileStoreTests.files(collector).temp == 0)
        // A declared size past the floor is refused before its body is read.
        let declared = UploadLimitTests.put(collector, [1], [("X-Cohorly-Content-Size", String(9 << 20))])
        #expect(declared.status == 507, "\(declared.text)")
        #expect(send(collector, "/track", body: event()).status == 200)
    }

    @Test func aFullDatabaseAnswers507WithTheReason() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        #expect(send(collector, "/track", body: event(insertId: "a")).status == 200)
        try collector.store.lock.withLock {
            var pages: Int64 = 0
            try collector.store.db.prepare("PRAGMA page_count").rows { row in
                pages = row.int(0)
                return false
            }
            try collector.store.db.execute("PRAGMA max_page_count=\(pages)")
        }
        let big = String(repeating: "x", count: 200_000)
        let reply = send(collector, "/track", body: event(insertId: "b", ["big": .string(big)]))
        #expect(reply.status == 507, "\(reply.text)")
        #expect(reply.text.contains("database or disk is full"), "\(reply.text)")
    }
}
