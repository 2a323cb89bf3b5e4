import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

@testable import CohorlyCrash

/// Launches ended by a termination signal (`systemctl stop`, `docker stop`, Ctrl-C): recorded in the launch marker
/// by the termination monitor, so the next launch sends no fatal event; the exit status and the app's own handling
/// stay what they were. Real CrashDemo processes (`scenario wait-for-signal`), signalled by this test, and a
/// loopback collector.
@Suite("Termination signals")
struct TerminationSignalTests {
    typealias Setup = AbnormalExitTests.Setup

    /// Starts `scenario wait-for-signal` and waits until its launch marker has its name (the monitor is installed
    /// by then).
    static func startWaiting(_ setup: Setup, _ extra: [String] = []) async throws -> Process {
        let process = try setup.start(["scenario", "wait-for-signal"] + extra)
        try await waitUntil("the launch marker exists") { setup.markers.count == 1 }
        return process
    }

    /// The marker's termination record, as the next launch will read it.
    static func termination(_ setup: Setup) -> LaunchRecord.Termination? {
        guard let name = setup.markers.first else { return nil }
        let fd = open(setup.reports.appendingPathComponent(name).path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return LaunchRecord.read(fd: fd)?.termination
    }

    @Test(arguments: [SIGTERM, SIGINT, SIGHUP, SIGUSR1])
    func aSignalWithItsDefaultActionEndsTheLaunchWithItsStatusAndSendsNothing(signal: Int32) async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let process = try await Self.startWaiting(setup)
        kill(process.processIdentifier, signal)
        await waitForExit(process)
        // Died of the signal, as without the SDK: a shell shows 128 + the signal (143 for SIGTERM).
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == signal)
        let record = try #require(Self.termination(setup))
        #expect(record.signal == signal)
        #expect(record.state == .ended)
        #expect(record.senderPid == getpid())

        let next = try await setup.launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(setup.markers.isEmpty)
        #expect(try setup.exceptions().isEmpty)
    }

    @Test func anAppsOwnSIGTERMHandlerStillDecidesHowTheLaunchEnds() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        // The app installed its handler before the SDK: the monitor chains to it, and the app exits as it chose.
        let process = try await Self.startWaiting(setup, ["--app-sigterm", "exit"])
        kill(process.processIdentifier, SIGTERM)
        await waitForExit(process)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 7)
        #expect(setup.markers.isEmpty)  // a normal exit: the exit hook removed the marker

        _ = try await setup.launch(["run"])
        #expect(try setup.exceptions().isEmpty)
    }

    @Test func anAppThatHandlesSIGTERMAndIsThenKilledIsReportedWithWhatIsKnown() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let process = try await Self.startWaiting(setup, ["--app-sigterm", "continue"])
        kill(process.processIdentifier, SIGTERM)
        // The app's handler ran and returned: the launch goes on (a slow shutdown), until it is killed.
        try await waitUntil("the app handled SIGTERM") { Self.termination(setup)?.state == .handled }
        #expect(process.isRunning)
        kill(process.processIdentifier, SIGKILL)
        await waitForExit(process)
        #expect(process.terminationStatus == SIGKILL)

        _ = try await setup.launch(["run"])
        let events = try await delivered { try setup.abnormalExits() }
        #expect(events.count == 1)
        let properties = try #require(events.first?.1)
        #expect(properties["$exception_level"] == "fatal")
        #expect(properties["$exception_abnormal_exit_cause"] == "killed_after_termination_signal")
        #expect(properties["$exception_termination_signal"] == "SIGTERM")
        #expect(properties["$exception_termination_sender_pid"]?.intValue == Int(getpid()))
        let value = properties["$exception_list"]?.arrayValue?.first?["value"]?.stringValue ?? ""
        #expect(value.contains("handled SIGTERM from pid \(getpid())"), "\(value)")
        #expect(!value.contains("lost power"), "\(value)")  // same boot: a power loss is known not to be it
    }

    /// A server framework's graceful shutdown (ServiceLifecycle, Vapor) makes a dispatch signal source for SIGTERM
    /// after install, and libdispatch replaces the monitor's handler with its own: the monitor wraps that one too,
    /// the app's source still fires, and a shutdown that does not finish before the supervisor's SIGKILL is
    /// reported as killed after the termination signal.
    @Test func aDispatchSignalSourceMadeAfterInstallStillFiresAndTheSIGTERMIsRecorded() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let output = setup.root.appendingPathComponent("stdout")
        #expect(FileManager.default.createFile(atPath: output.path, contents: nil))
        let process = try setup.process(["scenario", "wait-for-signal", "--app-sigterm", "dispatch"])
        process.standardOutput = try FileHandle(forWritingTo: output)
        try process.run()
        func said(_ line: String) -> Bool { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains(line) }
        try await waitUntil("the demo's source is registered") { said("monitor") }
        #expect(said("monitor watches SIGTERM"))
        kill(process.processIdentifier, SIGTERM)
        try await waitUntil("the app's dispatch source delivered SIGTERM") { said("app source: SIGTERM") }
        try await waitUntil("the monitor recorded SIGTERM") { Self.termination(setup)?.state == .handled }
        #expect(process.isRunning)  // a shutdown with a request in flight, until the supervisor's stop timeout:
        kill(process.processIdentifier, SIGKILL)
        await waitForExit(process)
        #expect(process.terminationStatus == SIGKILL)

        _ = try await setup.launch(["run"])
        let events = try await delivered { try setup.abnormalExits() }
        #expect(events.count == 1)
        let properties = try #require(events.first?.1)
        #expect(properties["$exception_abnormal_exit_cause"] == "killed_after_termination_signal")
        #expect(properties["$exception_termination_signal"] == "SIGTERM")
        // Known when the signal went through our handler; not when libdispatch's signalfd took it first.
        let sender = properties["$exception_termination_sender_pid"]?.intValue
        #expect(sender == nil || sender == Int(getpid()))
    }

    @Test func anIgnoredSIGTERMStaysIgnored() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let done = setup.root.appendingPathComponent("done")
        let process = try await Self.startWaiting(setup, ["--app-sigterm", "ignore", "--until", done.path])
        kill(process.processIdentifier, SIGTERM)  // discarded by the kernel at once when ignored
        #expect(FileManager.default.createFile(atPath: done.path, contents: nil))
        await waitForExit(process)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        #expect(setup.markers.isEmpty)
    }

    @Test func aSIGKILLIsStillReportedAndSaysWhatIsKnown() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let process = try await Self.startWaiting(setup)
        kill(process.processIdentifier, SIGKILL)
        await waitForExit(process)
        _ = try await setup.launch(["run"])
        let events = try await delivered { try setup.abnormalExits() }
        #expect(events.count == 1)
        let properties = try #require(events.first?.1)
        #expect(properties["$exception_abnormal_exit_cause"] == "killed_or_lost_power")
        #expect(properties["$exception_termination_signal"] == nil)
        let value = properties["$exception_list"]?.arrayValue?.first?["value"]?.stringValue ?? ""
        #expect(value.contains("in the same boot"), "\(value)")
        #expect(value.contains("SIGKILL"), "\(value)")
    }
}
