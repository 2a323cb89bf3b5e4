import CohorlyCollector
import Foundation
import TestWaiting
import Testing

/// A `-Xswiftc -static-executable` build (nothing shared, not even libc): it links with that flag alone (the
/// package's module maps bring what libdw.a needs), its clean launches report nothing, its crash is reported.
@Suite struct StaticExecutableTests {
    /// Five clean launches exit 0 and leave no report (before: most died at exit in libdispatch's thread-specific
    /// data cleanup, each leaving a phantom crash report); then a crash, reported by the next launch.
    @Test func cleanLaunchesAreQuietAndACrashIsReported() async throws {
        let launches = try Launches(try await StaticBuild.staticExecutable.executable())
        defer { launches.finish() }
        for _ in 0..<5 {
            let clean = try await launches.run(["run"])
            #expect(clean.status == 0, "\(clean)")
        }
        #expect(launches.reportInsertIds().isEmpty)
        #expect(launches.receivedInsertIds().isEmpty)

        let crash = try await launches.run(["crash", "fatal-error"])
        #expect(crash.signal == SIGILL, "\(crash)")
        let reports = launches.reportInsertIds()
        #expect(reports.count == 1)
        let next = try await launches.run(["run"])
        #expect(next.status == 0, "\(next)")
        let delivered = await eventually(timeout: 60) { launches.receivedInsertIds() == reports }
        #expect(delivered, "received \(launches.receivedInsertIds()), reports \(reports)")
        #expect(launches.reportInsertIds().isEmpty)
    }
}
