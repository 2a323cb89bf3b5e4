import Foundation
import Testing

/// The SDK's own threads carry names of their own in a crash report (`cohorly-deliver`, `cohorly-persist`,
/// `cohorly-hangs`), so they do not pass for the app's threads: Foundation's `Thread.name` never reached the
/// kernel, and they were listed under the app's name.
@Suite struct SDKThreadNameTests {
    @Test func aCrashReportNamesTheSDKsThreads() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        // Crashing 300 ms after install: the client's and the watchdog's threads are running by then.
        let crash = try await setup.launch([
            "crash", "fatal-error", "--crash-after-ms", "300", "--hang-threshold-ms", "5000",
        ])
        #expect(crash.signal == SIGILL)
        let report = try #require(try crash.reports().first)
        let names = report.threads.map(\.name)
        for name in ["cohorly-deliver", "cohorly-persist", "cohorly-hangs"] {
            #expect(names.filter { $0 == name }.count == 1, "\(name) in \(names)")
        }
        #expect(report.crashedThread?.name == "CrashDemo")
    }
}
