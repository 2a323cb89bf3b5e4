import Cohorly
import CohorlyCollector
import CohorlyCrash
import Foundation
import TestWaiting
import Testing

/// The hang watchdog, with real CrashDemo processes (`CrashDemo hang …`) and a loopback collector. Thresholds
/// and hang lengths are scaled down (400 ms threshold, 1.2 s hang) to keep the suite fast.
@Suite("Hang watchdog")
struct HangTests {
    static let threshold = ["--hang-threshold-ms", "400", "--hang-ms", "1200"]

    /// The `hang subject=… duration_ms=…` lines a run printed.
    static func hangLines(_ run: CrashDemoRun) -> [String] {
        run.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("hang subject=") }
    }

    static func field(_ name: String, of line: String) -> String? {
        line.split(separator: " ").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
    }

    static func hangFiles(_ directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter {
            $0.hasPrefix("hang-")
        }
    }

    @Test(arguments: [("main", "main_thread"), ("executor", "demo_executor"), ("heartbeat", "demo_loop")])
    func aBlockedSubjectIsReportedOnceWithItsDuration(word: String, subject: String) async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let run = try await setup.launch(["hang", word] + Self.threshold)
        #expect(run.exitStatus == 0, "\(run.stdout) \(run.stderr)")
        let lines = Self.hangLines(run)
        #expect(lines.count == 1, "\(run.stdout)")
        let line = try #require(lines.first)
        #expect(Self.field("subject", of: line) == subject)
        #expect(Self.field("ongoing", of: line) == "false")
        // The whole blocked time (1.2 s), not the threshold.
        let duration = try #require(Self.field("duration_ms", of: line).flatMap { Int($0) })
        #expect(duration >= 1100 && duration < 5000, "\(line)")
        #expect((Self.field("frames", of: line).flatMap { Int($0) } ?? 0) > 2, "\(line)")
        // The hang ended: its died-while-hung file is gone.
        #expect(Self.hangFiles(setup.reports).isEmpty)

        // One event, sent at once: level error, mechanism hang (handled), the whole duration, and the hung
        // thread as the subject, blocked in the known function.
        let events = try setup.exceptions()
        #expect(events.count == 1)
        let properties = try #require(events.first.flatMap { CohorlyValue(json: $0.propertiesJSON)?.objectValue })
        #expect(properties["$exception_level"] == "error")
        #expect(properties["$exception_type"] == "Hang")
        #expect((properties["$exception_hang_duration_ms"]?.intValue ?? 0) >= 1100)
        let entry = properties["$exception_list"]?.arrayValue?.first
        #expect(entry?["mechanism"]?["type"] == "hang")
        #expect(entry?["mechanism"]?["handled"] == true)
        let frames = entry?["stacktrace"]?["frames"]?.arrayValue ?? []
        #expect(
            frames.contains { $0["function"]?.stringValue?.contains("demoHangInKnownFunction") == true },
            "\(frames.compactMap { $0["function"]?.stringValue })")
    }

    @Test func aCrashWhileHungIsCapturedWholeAndReportedAsTheCrashAlone() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["hang", "crash-while-hung", "--hang-threshold-ms", "300"])
        #expect(crash.signal == SIGSEGV, "\(crash.stdout) \(crash.stderr)")
        // The crash path after a live capture: it asked the other threads with its own handler, and every one
        // answered (the live handler would have let SIGSYS kill the process).
        let report = try #require(try crash.reports().first)
        #expect((report.threadsRequested ?? 0) > 0)
        #expect(report.threadsAnswered == report.threadsRequested)
        #expect(Self.hangFiles(setup.reports).count == 1)

        // One death, one event: the crash; the hang file of the same launch is dropped.
        let next = try await setup.launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(Self.hangFiles(setup.reports).isEmpty)
        let events = try await delivered { try setup.exceptions() }
        #expect(events.count == 1)
        #expect(events.first?.insertId == report.insertId)
        let properties = try #require(events.first.flatMap { CohorlyValue(json: $0.propertiesJSON)?.objectValue })
        #expect(properties["$exception_type"] == "SIGSEGV")
    }

    @Test func aLongHangIsReportedOnceWhileItGoesOn() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let run = try await setup.launch(
            ["hang", "main", "--hang-threshold-ms", "300", "--hang-ms", "1500", "--hang-report-after-ms", "600"])
        #expect(run.exitStatus == 0, "\(run.stdout) \(run.stderr)")
        let lines = Self.hangLines(run)
        #expect(lines.count == 1, "\(run.stdout)")
        #expect(lines.first.flatMap { Self.field("ongoing", of: $0) } == "true")
        let duration = lines.first.flatMap { Self.field("duration_ms", of: $0) }.flatMap { Int($0) } ?? 0
        #expect(duration >= 600 && duration < 1500, "\(lines)")
    }

    @Test(arguments: ["busy", "plain-loop"])
    func noHangForAnAppThatProgressesOrDoesNotServiceTheMainQueue(word: String) async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        // A hang going on would be reported after 600 ms, well within the 1.5 s run.
        let run = try await setup.launch(
            ["hang", word, "--hang-threshold-ms", "300", "--hang-ms", "1500", "--hang-report-after-ms", "600"])
        #expect(run.exitStatus == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.stdout.contains("hangs reported: 0"), "\(run.stdout)")
        #expect(Self.hangLines(run).isEmpty)
        #expect(try setup.exceptions().isEmpty)
        #expect(Self.hangFiles(setup.reports).isEmpty)
    }

    /// Starts a launch hung for ever, kills it once its hang file exists, and returns its insert id (the hang
    /// file's): what a launch that died hung leaves for the next.
    static func leaveAHangReport(_ setup: DeliveryTests.Setup) async throws -> String {
        let process = Process()
        process.executableURL = DemoBuild.debug.executable
        // No report of the hang while it goes on (default after 30 s): on a loaded machine this test's polling can
        // take that long to see the hang file, and the launch would send one more (non-fatal) event.
        process.arguments =
            ["hang", "forever", "--hang-threshold-ms", "300", "--hang-report-after-ms", "600000"]
            + ["--report-dir", setup.reports.path, "--storage", setup.storage.path, "--breadcrumb", "before the hang"]
        var environment = ProcessInfo.processInfo.environment
        environment.merge(setup.environment) { _, new in new }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // While it is hung, the launch's hang file exists (polled, with a deadline).
        let deadline = Date(timeIntervalSinceNow: 20)
        while Self.hangFiles(setup.reports).isEmpty && Date() < deadline && process.isRunning {
            try await Task.sleep(for: .milliseconds(20))
        }
        let files = Self.hangFiles(setup.reports)
        try #require(files.count == 1, "no hang file appeared")
        kill(process.processIdentifier, SIGKILL)
        #expect(await eventually(timeout: 10) { !process.isRunning })
        return String(files[0].dropFirst("hang-".count).dropLast(".json".count))
    }

    @Test func aProcessKilledWhileHungIsReportedFatalOnTheNextLaunch() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let insertId = try await Self.leaveAHangReport(setup)

        // The hung thread may not be the event's first (below), and the threads after the first are symbolicated
        // while the budget lasts (1 s by default, which a loaded machine can spend before reaching it).
        let next = try await setup.launch(["run", "--symbolication-budget-ms", "600000"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(Self.hangFiles(setup.reports).isEmpty)
        // The event may go out through the detached sender the launch started, which can still be sending when
        // the launch has exited (seen: 1 run in about 60 of this suite on a loaded machine found no event yet).
        #expect(await eventually { (try? setup.exceptions().count) == 1 })
        let events = try setup.exceptions()
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event.insertId == insertId)
        let properties = try #require(CohorlyValue(json: event.propertiesJSON)?.objectValue)
        #expect(properties["$exception_level"] == "fatal")
        #expect(properties["$exception_type"] == "Hang")
        #expect(properties["$exception_hang_subject"] == "main thread")
        #expect((properties["$exception_hang_duration_ms"]?.intValue ?? 0) >= 300)
        // The breadcrumbs of the moment the hang was seen.
        let crumbs = properties["$exception_breadcrumbs"]?.arrayValue ?? []
        #expect(crumbs.last?["message"] == "before the hang")
        let entry = properties["$exception_list"]?.arrayValue?.first
        #expect(entry?["mechanism"]?["type"] == "hang")
        #expect(entry?["mechanism"]?["handled"] == false)
        // The hung thread: the main queue's drain, blocked in the known function. (At detection the watchdog
        // takes the thread that answered its last ping; libdispatch may have moved the main queue to another
        // worker since, so the function is looked for in every thread of the event.)
        func namesFunction(_ frames: [CohorlyValue]) -> Bool {
            frames.contains { $0["function"]?.stringValue?.contains("demoHangInKnownFunction") == true }
        }
        let subjectFrames = entry?["stacktrace"]?["frames"]?.arrayValue ?? []
        let others = properties["$exception_threads"]?.arrayValue ?? []
        #expect(
            namesFunction(subjectFrames)
                || others.contains { namesFunction($0["stacktrace"]?["frames"]?.arrayValue ?? []) })
        #expect(EventSchema.violations(properties) == [])

        // A further launch sends nothing again.
        let third = try await setup.launch(["run"])
        #expect(third.exitStatus == 0)
        #expect(try setup.exceptions().count == 1)
    }

    /// A launch that finds a hang report and dies before it has queued its event (a crash or kill loop at
    /// startup) hands it to its detached sender, as it does crash reports: the event arrives without a further
    /// launch.
    @Test func aLaunchKilledAtStartupHandsAHangReportToItsDetachedSender() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let insertId = try await Self.leaveAHangReport(setup)
        let go = setup.root.appendingPathComponent("go")
        async let killed = setup.launch(["scenario", "sigkill", "--until", go.path])
        try await releaseOnceItsSenderStarted(go)
        #expect(try await killed.signal == SIGKILL)
        try await waitUntil("the sender delivered the hang event", seconds: 60) {
            (try? setup.exceptions().contains { $0.insertId == insertId }) ?? false
        }
        let events = try setup.exceptions().filter { $0.insertId == insertId }
        #expect(events.count == 1)
        let properties = CohorlyValue(json: events.first?.propertiesJSON ?? "")?.objectValue ?? [:]
        #expect(properties["$exception_level"] == "fatal" && properties["$exception_type"] == "Hang")
        #expect(Self.hangFiles(setup.reports).isEmpty)
    }
}
