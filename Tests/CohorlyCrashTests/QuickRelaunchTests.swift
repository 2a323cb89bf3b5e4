import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

/// A crash, then a launch that ends while it symbolicates that crash's report: a normal exit is no death inside
/// symbolication (the detached sender symbolicates the report); only a process that died there marks it raw.
/// Real CrashDemo processes and a loopback collector.
@Suite("Quick relaunches during symbolication")
struct QuickRelaunchTests {
    /// The frames of the crashed thread of the one crash event (not an abnormal exit) the collector holds.
    static func crashFrames(_ setup: DeliveryTests.Setup) throws -> [CohorlyValue]? {
        let crashes = try setup.exceptions().compactMap { CohorlyValue(json: $0.propertiesJSON)?.objectValue }.filter {
            $0["$exception_list"]?.arrayValue?.first?["mechanism"]?["type"] != "abnormal_exit"
        }
        guard crashes.count == 1 else { return nil }
        return crashes[0]["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
    }

    static func markers(_ setup: DeliveryTests.Setup) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: setup.reports.path)) ?? []).filter {
            $0.hasSuffix(".symbolicating")
        }
    }

    @Test func aRelaunchThatExitsDuringSymbolicationStillSendsTheCrashSymbolicated() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["crash", "fatal-error"])
        #expect(crash.signal == SIGILL)

        let quick = try await setup.launch(["scenario", "exit-during-symbolication"])
        #expect(quick.exitStatus == 0, "\(quick.stdout) \(quick.stderr)")
        // It did exit while the marker existed, and the marker is private like the rest of the directory.
        #expect(quick.stdout.contains("symbolicating marker mode 600"), "\(quick.stdout)")

        // The detached sender took the report over and symbolicated it.
        #expect(try await eventually(timeout: 60) { try Self.crashFrames(setup) != nil })
        let frames = try #require(try Self.crashFrames(setup))
        #expect(
            frames.contains { $0["function"]?.stringValue?.contains("crashFatalError") == true },
            "\(frames.map { $0["function"]?.stringValue ?? $0["instruction_addr"]?.stringValue ?? "?" })")
        #expect(Self.markers(setup).isEmpty)
    }

    @Test func aLaunchThatDiesDuringSymbolicationHasTheReportSentRaw() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["crash", "fatal-error"])
        #expect(crash.signal == SIGILL)

        let killed = try await setup.launch(["scenario", "die-during-symbolication"])
        #expect(killed.signal == SIGKILL, "\(killed.stdout) \(killed.stderr)")
        #expect(killed.stdout.contains("symbolicating marker mode 600"), "\(killed.stdout)")

        // Whoever sends it next (the killed launch's detached sender) finds the marker: raw, never held back.
        #expect(try await eventually(timeout: 60) { try Self.crashFrames(setup) != nil })
        let frames = try #require(try Self.crashFrames(setup))
        #expect(!frames.isEmpty)
        #expect(frames.allSatisfy { $0["function"] == nil }, "\(frames)")
        #expect(Self.markers(setup).isEmpty)  // done with: removed once the event was queued
    }
}
