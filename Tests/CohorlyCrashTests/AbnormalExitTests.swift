import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

@testable import CohorlyCrash

/// Launches that end without a normal exit or a reported crash (SIGKILL, OOM kill) → one fatal `$exception`
/// with mechanism `abnormal_exit` on the next launch; nothing for a normal exit, a crash, an exec or a launch
/// that still runs. Real CrashDemo processes and a loopback collector.
@Suite("Abnormal exits reported by the next launch")
struct AbnormalExitTests {
    struct Setup {
        let collector: Collector
        let root: URL
        var storage: URL { root.appendingPathComponent("storage") }
        var reports: URL { root.appendingPathComponent("reports") }
        var environment: [String: String] {
            ["COHORLY_HOST": collector.baseURL.absoluteString, "COHORLY_TOKEN": "demo-token"]
        }

        init() throws {
            var configuration = CollectorConfiguration()
            configuration.tokens = ["demo-token"]
            collector = try Collector(configuration: configuration)
            _ = try collector.start()
            root = try makeTemporaryDirectory("exits")
        }

        var clientArguments: [String] {
            ["--storage", storage.path, "--sender-timeout-ms", "15000", "--memory-sample-ms", "50"]
        }

        /// Runs CrashDemo to its end; `storage` replaces the client's queue directory (another opt-out state).
        func launch(_ arguments: [String], storage: URL? = nil) async throws -> CrashDemoRun {
            try await runCrashDemo(
                arguments + clientArguments + (storage.map { ["--storage", $0.path] } ?? []), reportDirectory: reports,
                withClient: true, environment: environment)
        }

        /// Starts CrashDemo without waiting for it.
        func start(_ arguments: [String]) throws -> Process {
            let process = try process(arguments)
            try process.run()
            return process
        }

        /// CrashDemo, not started (`prefix` runs first, e.g. a shell that moves it to a cgroup).
        func process(_ arguments: [String], prefix: [String] = []) throws -> Process {
            let process = Process()
            let demo = DemoBuild.debug.executable.path
            let all = [demo] + arguments + clientArguments + ["--report-dir", reports.path]
            process.executableURL = URL(fileURLWithPath: prefix.first ?? demo)
            process.arguments = Array((prefix.isEmpty ? Array(all.dropFirst()) : Array(prefix.dropFirst()) + all))
            var environment = ProcessInfo.processInfo.environment
            environment["SWIFT_BACKTRACE"] = "enable=no"
            environment.merge(self.environment) { _, new in new }
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            return process
        }

        func exceptions() throws -> [StoredEvent] {
            try collector.store.events(matching: EventQuery(event: "$exception", limit: 1000))
        }

        func abnormalExits() throws -> [(StoredEvent, Properties)] {
            try exceptions().compactMap { event in
                guard let properties = CohorlyValue(json: event.propertiesJSON)?.objectValue,
                    properties["$exception_list"]?.arrayValue?.first?["mechanism"]?["type"] == "abnormal_exit"
                else { return nil }
                return (event, properties)
            }
        }

        var markers: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: reports.path)) ?? []).filter {
                $0.hasPrefix("launch-") && $0.hasSuffix(".marker")
            }
        }

        func finish() {
            removeLaunchDirectory(root)
            collector.stop()
        }
    }

    @Test func aLaunchThatSIGKILLsItselfIsReportedOnceWithItsContext() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let killed = try await setup.launch([
            "scenario", "sigkill", "--identify", "killed-user", "--register", "plan=pro",
        ])
        #expect(killed.signal == SIGKILL)
        let insertId = try #require(killed.stdout.split(separator: "\n").first { $0.hasPrefix("insert id ") })
            .dropFirst("insert id ".count)
        #expect(setup.markers == ["launch-\(insertId).marker"])

        let next = try await setup.launch(["run", "--identify", "later-user", "--version", "2.0.0"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(setup.markers.isEmpty)
        let events = try await delivered { try setup.abnormalExits() }
        #expect(events.count == 1)
        #expect(try setup.exceptions().count == 1)
        let (event, properties) = try #require(events.first)
        #expect(event.insertId == String(insertId))
        #expect(event.distinctId == "killed-user")  // the killed launch's identity, not the sender's
        #expect(properties["release"] == "CrashDemo@1.0.0")
        #expect(properties["plan"] == "pro")
        #expect(properties["$exception_level"] == "fatal")
        #expect(properties["$exception_abnormal_exit_cause"] == "killed_or_lost_power")
        #expect(properties["$exception_type"] == "AbnormalExit")
        #expect((properties["$exception_last_rss_bytes"]?.intValue ?? 0) > 1 << 20)
        let exception = try #require(properties["$exception_list"]?.arrayValue?.first)
        #expect(exception["mechanism"]?["handled"] == false)
        #expect(exception["stacktrace"] == nil)
        #expect(exception["value"]?.stringValue?.contains("SIGKILL") == true)

        // Sent once: a further launch sends nothing more.
        _ = try await setup.launch(["run"])
        #expect(try setup.exceptions().count == 1)
    }

    @Test func aKillLoopAtStartupStillReports() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        // Every answer takes 300 ms; every launch is killed once it started its detached sender (the first, with no
        // launch before it to report, at once), before its own flush could deliver: the detached sender delivers
        // the previous launch's abnormal exit.
        setup.collector.injectFault(Fault(delay: 0.3), count: 10_000)
        for index in 0..<4 {
            let go = setup.root.appendingPathComponent("go-\(index)")
            if index == 0 { #expect(FileManager.default.createFile(atPath: go.path, contents: nil)) }
            async let run = setup.launch(["scenario", "sigkill", "--until", go.path])
            if index > 0 { try await releaseOnceItsSenderStarted(go) }
            #expect(try await run.signal == SIGKILL)
        }
        // The detached senders outlive the launches; wait for their work (a safety net, not a timing claim).
        let deadline = Date(timeIntervalSinceNow: 60)
        while try setup.abnormalExits().count < 3 && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let events = try setup.abnormalExits()
        #expect(events.count == 3)
        #expect(Set(events.compactMap(\.0.insertId)).count == 3)
        #expect(setup.markers.count == 1)  // the last launch's, for the next one
    }

    @Test func aNormalExitLeavesNoMarkerAndSendsNothing() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let first = try await setup.launch(["run"])
        #expect(first.exitStatus == 0)
        #expect(setup.markers.isEmpty)
        let second = try await setup.launch(["run"])
        #expect(second.exitStatus == 0)
        #expect(try setup.exceptions().isEmpty)
    }

    @Test func anOptedOutLaunchThatIsKilledIsNotReported() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let killed = try await setup.launch(["scenario", "sigkill", "--opt-out"])
        #expect(killed.signal == SIGKILL)
        #expect(setup.markers.count == 1)
        // The next launch is opted in (its client keeps its state elsewhere).
        _ = try await setup.launch(["run"], storage: setup.root.appendingPathComponent("opted-in"))
        #expect(setup.markers.isEmpty)
        #expect(try setup.exceptions().isEmpty)
    }

    @Test func aCrashIsReportedOnlyAsTheCrash() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["crash", "null-write"])
        #expect(crash.signal == SIGSEGV)
        #expect(setup.markers.isEmpty)  // the crash handler removed it once the report was committed
        _ = try await setup.launch(["run"])
        let events = try await delivered { try setup.exceptions() }
        #expect(events.count == 1)
        #expect(try setup.abnormalExits().isEmpty)
    }

    @Test func anExecIsNoAbnormalExit() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        // Exec'd into another program that still runs when the next launch looks.
        let execd = try setup.start(["scenario", "exec-sleep"])
        let pid = execd.processIdentifier
        try await waitUntil("the child exec'd sleep") {
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
            return exe.hasSuffix("/sleep")
        }
        _ = try await setup.launch(["run"])
        #expect(setup.markers.isEmpty)  // recognized as exec'd and removed
        kill(pid, SIGKILL)
        await waitForExit(execd)
        // Prepared for the exec, into a program that has ended by the next launch.
        let prepared = try await setup.launch(["scenario", "exec-prepared"])
        #expect(prepared.exitStatus == 0)
        #expect(setup.markers.isEmpty)
        _ = try await setup.launch(["run"])
        #expect(try setup.exceptions().isEmpty)
    }

    @Test func aLaunchStillRunningIsLeftAloneAndConcurrentLaunchesReportEachDeathOnce() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let go = setup.root.appendingPathComponent("go")
        let held = try setup.start(["scenario", "sigkill", "--until", go.path])
        try await waitUntil("the held launch made its marker") { setup.markers.count == 1 }
        // A launch in parallel: the held one is running, not dead.
        _ = try await setup.launch(["run"])
        #expect(try setup.exceptions().isEmpty)
        #expect(setup.markers.count == 1)
        // A launch killed while the held one still runs (so its delivery, however far it got, leaves the held
        // launch's marker alone), then the held one killed: two deaths, two markers.
        let killed = try await setup.launch(["scenario", "sigkill"])
        #expect(killed.signal == SIGKILL)
        #expect(FileManager.default.createFile(atPath: go.path, contents: nil))
        await waitForExit(held)
        #expect(held.terminationReason == .uncaughtSignal && held.terminationStatus == SIGKILL)
        #expect(setup.markers.count == 2)
        // Two launches start together: each death is sent once.
        async let first = setup.launch(["run"])
        async let second = setup.launch(["run"])
        _ = try await (first, second)
        let events = try await delivered(atLeast: 2) { try setup.abnormalExits() }
        #expect(events.count == 2)
        #expect(Set(events.compactMap(\.0.insertId)).count == 2)
        #expect(setup.markers.isEmpty)
    }

    @Test func anOOMKillInASmallMemoryCgroupIsReportedAsOOMKill() async throws {
        try await oomKill(container: false)
    }

    /// As in a container with a cgroup namespace: `/proc/self/cgroup` says `/` and the container's own cgroup is
    /// mounted at /sys/fs/cgroup; the next launch runs in the same container.
    @Test func anOOMKillInsideAContainersCgroupNamespaceIsReportedAsOOMKill() async throws {
        try await oomKill(container: true)
    }

    func oomKill(container: Bool) async throws {
        let cgroup: MemoryCgroup
        switch MemoryCgroup.make(limitBytes: 96 << 20) {
        case .success(let made): cgroup = made
        case .failure(let reason):
            print("AbnormalExitTests: OOM test skipped: \(reason.description)")
            return
        }
        defer { cgroup.remove() }
        if container, let reason = cgroup.containerUnavailable() {
            print("AbnormalExitTests: OOM-in-a-container test skipped: \(reason)")
            return
        }
        let setup = try Setup()
        defer { setup.finish() }
        // The shell joins the cgroup, then becomes CrashDemo: the launch runs in the cgroup from its start.
        let child = try setup.process(["scenario", "allocate"], prefix: cgroup.prefix(container: container))
        try await runToEnd(child)
        #expect(child.terminationReason == .uncaughtSignal && child.terminationStatus == SIGKILL)
        let next = try setup.process(["run"], prefix: container ? cgroup.prefix(container: true) : [])
        try await runToEnd(next)
        #expect(next.terminationReason == .exit && next.terminationStatus == 0)
        let events = try await delivered { try setup.abnormalExits() }
        #expect(events.count == 1)
        let properties = try #require(events.first?.1)
        #expect(properties["$exception_abnormal_exit_cause"] == "oom_kill")
        #expect(properties["$exception_type"] == "OOMKill")
        #expect((properties["$exception_peak_rss_bytes"]?.intValue ?? 0) > 16 << 20)
        if container {  // the counter was read where the container sees its own cgroup
            let expected =
                cgroup.version == 2 ? "/sys/fs/cgroup/memory.events" : "/sys/fs/cgroup/memory/memory.oom_control"
            #expect(properties["$exception_cgroup_oom_file"]?.stringValue == expected)
        }
    }
}

/// Polls `condition` every 10 ms until it holds, failing after `seconds`.
func waitUntil(_ what: String, seconds: Double = 30, _ condition: () -> Bool) async throws {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while !condition() {
        guard Date() < deadline else { throw WaitTimeout(what: what) }
        try await Task.sleep(for: .milliseconds(10))
    }
}

struct WaitTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting until \(what)" }
}
