import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

@testable import CohorlyCrash

/// Issue 41, item 8: the app makes its `Cohorly` client (and with it the queue's SQLite files) before
/// `CohorlyCrash.install`. With the queue and the reports on one nearly full file system (as by default), the
/// queue's files took what was left, and the crash left an empty `.tmp`. The client now has the crash recorder take
/// its reserve before the queue opens, and install moves it into the report directory: a real CrashDemo crash with
/// 8 to 64 KiB free leaves a report holding its header and crashed thread, and the next launch sends it as the
/// crash it was (not as a lost report).
@Suite("Full disks: the reserve before the queue")
struct ReserveBeforeQueueTests {
    @Test(arguments: [8, 16, 32, 64])
    func aCrashOnADiskTheQueueSharesKeepsItsHeaderReport(freeKiB: Int) async throws {
        guard let disk = TinyFileSystem(kib: 1024, label: "queue-first-\(freeKiB)") else { return }
        defer { disk.unmount() }
        let launches = try SharedDiskLaunches(disk: disk, freeKiB: freeKiB)
        defer { launches.collector.stop() }
        let collector = launches.collector
        func launch(_ arguments: [String]) async throws -> CrashDemoRun { try await launches.launch(arguments) }
        let crash = try await launch(["crash", "null-write"])
        #expect(crash.signal == SIGSEGV)
        // A report with its header and crashed thread, not an empty `.tmp`.
        let left = (crash.reportFiles.map(\.lastPathComponent) + crash.tornFiles)
        let report = try #require(try crash.reports().first, "left: \(left)")
        #expect(report.signal.name == "SIGSEGV")
        #expect((report.crashedThread?.frames.count ?? 0) > 0)
        // Space is freed; the next launch sends the crash itself.
        #expect(unlink(disk.path.appendingPathComponent("filler").path) == 0)
        let next = try await launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let query = EventQuery(event: "$exception", limit: 10)
        #expect(await eventually { (try? collector.store.events(matching: query).count) == 1 })
        let event = try #require(try collector.store.events(matching: query).first)
        #expect(event.insertId == report.insertId)
        let properties = try #require(CohorlyValue(json: event.propertiesJSON)?.objectValue)
        #expect(properties["$exception_abnormal_exit_cause"] == nil, "\(properties)")
        #expect(event.propertiesJSON.contains("SIGSEGV"), "\(event.propertiesJSON.prefix(400))")
        #expect(next.tornFiles.isEmpty && next.reportFiles.isEmpty)
    }
}
