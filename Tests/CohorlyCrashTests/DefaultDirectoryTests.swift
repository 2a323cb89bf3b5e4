import Foundation
import TestWaiting
import Testing

/// An app that names no directory keeps its queue and its crash reports in one tree: `$XDG_STATE_HOME/cohorly`,
/// else `$HOME/.local/state/cohorly` (HOME from the environment, not the password file).
struct DefaultDirectoryTests {
    /// Runs CrashDemo with the client and no directory options, in `environment` (no COHORLY_* or XDG variables
    /// from the test runner).
    func crash(environment extra: [String: String]) async throws -> Process {
        let process = Process()
        process.executableURL = DemoBuild.debug.executable
        // No sender at the crash: it would queue the report (and delete it) before this test counts it.
        process.arguments = ["crash", "null-write", "--sender-timeout-ms", "1000", "--no-sender-at-crash"]
        var environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("COHORLY_") && $0.key != "XDG_STATE_HOME"
        }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment["COHORLY_HOST"] = "http://127.0.0.1:9"  // nothing is sent in this test
        environment.merge(extra) { _, new in new }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try await runToEnd(process)
        return process
    }

    func reports(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".json") }
    }

    @Test func queueAndReportsLiveUnderHomeOrXDGStateHome() async throws {
        let root = try makeTemporaryDirectory("default-directories")
        defer { removeLaunchDirectory(root) }
        let home = root.appendingPathComponent("home")
        let crashed = try await crash(environment: ["HOME": home.path])
        #expect(crashed.terminationReason == .uncaughtSignal && crashed.terminationStatus == SIGSEGV)
        let state = home.appendingPathComponent(".local/state/cohorly")
        // Per app, as the reports are: another app of this user never sends this one's events.
        #expect(
            FileManager.default.fileExists(atPath: state.appendingPathComponent("queues/CrashDemo/queue.sqlite").path))
        #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("queue.sqlite").path))
        #expect(reports(in: state.appendingPathComponent("crashes/CrashDemo")).count == 1)

        let xdg = root.appendingPathComponent("xdg")
        let again = try await crash(environment: ["HOME": home.path, "XDG_STATE_HOME": xdg.path])
        #expect(again.terminationStatus == SIGSEGV)
        #expect(
            FileManager.default.fileExists(
                atPath: xdg.appendingPathComponent("cohorly/queues/CrashDemo/queue.sqlite").path))
        #expect(reports(in: xdg.appendingPathComponent("cohorly/crashes/CrashDemo")).count == 1)
        // The HOME tree is untouched.
        #expect(reports(in: state.appendingPathComponent("crashes/CrashDemo")).count == 1)
    }
}
