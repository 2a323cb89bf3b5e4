import Cohorly
import CohorlyCollector
import CohorlyCrash
import Foundation
import TestWaiting
import Testing

/// The sender the crash handler starts once the report is committed (cly_crash_time_sender.c): a crash reaches the
/// collector with no later launch, once, symbolicated; where the sender cannot be started, or is turned off, the
/// next launch sends it.
@Suite("A crash is sent at crash time")
struct CrashTimeSenderTests {
    /// One launch of CrashDemo for `setup`, its crash starting the sender unless `senderAtCrash` is false.
    static func launch(
        _ setup: DeliveryTests.Setup, _ arguments: [String], senderAtCrash: Bool = true
    ) async throws -> CrashDemoRun {
        try await runCrashDemo(
            arguments + ["--storage", setup.storage.path, "--sender-timeout-ms", "15000"],
            reportDirectory: setup.reports, withClient: true, environment: setup.environment,
            senderAtCrash: senderAtCrash)
    }

    /// The function names of the crashed thread's frames of `event`.
    static func functions(_ event: StoredEvent) -> [String] {
        let properties = CohorlyValue(json: event.propertiesJSON)?.objectValue ?? [:]
        let frames = properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        return frames.compactMap { $0["function"]?.stringValue }
    }

    @Test func aToolThatCrashesOnceAndIsNeverLaunchedAgainIsReportedSymbolicated() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let crash = try await Self.launch(setup, ["crash", "fatal-error", "--identify", "tool-user"])
        #expect(crash.signal == SIGILL)
        // No other launch: the sender the crash started delivers it.
        #expect(await eventually(timeout: 60) { (try? setup.exceptions().count) == 1 })
        let event = try #require(try setup.exceptions().first)
        #expect(event.distinctId == "tool-user")
        #expect(Self.functions(event).contains { $0.contains("crashFatalError") }, "\(Self.functions(event))")
        // The report is gone once its event is queued, and the sender ends once the queue is delivered.
        #expect(await eventually { crash.reportFiles.isEmpty && DetachedSenders.running(under: setup.root).isEmpty })
        #expect(try setup.exceptions().count == 1)
    }

    @Test func aCrashLoopAtStartupArrivesOnceEachAndNamed() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        // Each launch crashes right after install, while the senders of the crashes before it (and the handover
        // senders of the launches that found their reports) still run.
        for _ in 0..<5 {
            let crash = try await Self.launch(setup, ["crash", "fatal-error"])
            #expect(crash.signal == SIGILL)
        }
        #expect(await eventually(timeout: 60) { (try? setup.exceptions().count) == 5 })
        // Every sender is done, every report gone: nothing is left to arrive twice.
        #expect(
            await eventually(timeout: 60) {
                DetachedSenders.running(under: setup.root).isEmpty
                    && CrashReportStore(directory: setup.reports).pendingReports().isEmpty
            })
        let events = try setup.exceptions()
        #expect(events.count == 5)
        #expect(Set(events.compactMap(\.insertId)).count == 5)
        for event in events {
            #expect(Self.functions(event).contains { $0.contains("crashFatalError") }, "\(Self.functions(event))")
        }
    }

    @Test func whereTheSenderCannotBeStartedTheNextLaunchSendsTheCrash() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        // A file without exec permission: execve fails in the handler's child (as under a seccomp filter or a
        // noexec mount), the report stays.
        let notExecutable = setup.root.appendingPathComponent("not-executable")
        #expect(
            FileManager.default.createFile(
                atPath: notExecutable.path, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o644]))
        let crash = try await Self.launch(setup, ["crash", "null-write", "--sender-executable", notExecutable.path])
        #expect(crash.signal == SIGSEGV)
        // The child could not exec the sender: none runs, the report is there.
        #expect(DetachedSenders.running(under: setup.root).isEmpty)
        let report = try #require(try crash.reports().first)
        #expect(try setup.exceptions().isEmpty)

        let next = try await Self.launch(setup, ["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(await eventually(timeout: 60) { (try? setup.exceptions().count) == 1 })
        #expect(try setup.exceptions().first?.insertId == report.insertId)
    }

    @Test func turnedOffTheCrashWaitsForTheNextLaunch() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let crash = try await Self.launch(setup, ["crash", "null-write"], senderAtCrash: false)
        #expect(crash.signal == SIGSEGV)
        // Nothing was started at the crash (it would run now, or have sent the event and deleted the report).
        #expect(DetachedSenders.running(under: setup.root).isEmpty)
        let report = try #require(try crash.reports().first)
        #expect(try setup.exceptions().isEmpty)

        let next = try await Self.launch(setup, ["run"], senderAtCrash: false)
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(await eventually(timeout: 60) { (try? setup.exceptions().count) == 1 })
        #expect(try setup.exceptions().first?.insertId == report.insertId)
    }

    @Test func aCrashRightAfterInstallIsSentTheQueuesWay() async throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["phc_demo"]
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        defer { collector.stop() }
        // Anything sent the Cohorly API's way is refused: only PostHog's capture V1 gets through.
        collector.injectFault(Fault(status: 400, path: "/track"), count: 10_000)
        let root = try makeTemporaryDirectory("crash-time-posthog")
        defer { removeLaunchDirectory(root) }
        let crash = try await runCrashDemo(
            [
                "crash", "null-write", "--storage", root.appendingPathComponent("storage").path,
                "--sender-timeout-ms", "50000",
            ], reportDirectory: root.appendingPathComponent("reports"), withClient: true,
            environment: [
                "COHORLY_HOST": collector.baseURL.absoluteString, "COHORLY_TOKEN": "phc_demo",
                "COHORLY_DESTINATION": "posthog",
            ], senderAtCrash: true)
        #expect(crash.signal == SIGSEGV)
        #expect(
            await eventually(timeout: 60) {
                (try? collector.store.events(matching: EventQuery(event: "$exception", limit: 10)).count) == 1
            })
    }

    /// Through Sentry, the crash's own sender ends the crashed launch's session `crashed` in the crash event's
    /// envelope (the session was still open: no later launch had made it wait), and a later launch ends it no more.
    @Test func throughSentryTheCrashedLaunchsSessionEndsCrashed() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let environment = setup.environment.merging([
            "COHORLY_DESTINATION": "sentry",
            "COHORLY_SENTRY_DSN": "http://demo-token@127.0.0.1:\(setup.collector.baseURL.port ?? 0)/1",
        ]) { _, new in new }
        func sessions() -> [CohorlyValue] {
            ((try? setup.collector.store.records(kind: "sentry_session")) ?? []).compactMap {
                CohorlyValue(json: $0.json)
            }
        }
        let crash = try await runCrashDemo(
            ["crash", "fatal-error", "--storage", setup.storage.path, "--sender-timeout-ms", "15000"],
            reportDirectory: setup.reports, withClient: true, environment: environment, senderAtCrash: true)
        #expect(crash.signal == SIGILL)
        #expect(await eventually(timeout: 60) { sessions().contains { $0["status"] == "crashed" } }, "\(sessions())")
        #expect(await eventually { DetachedSenders.running(under: setup.root).isEmpty })
        let next = try await runCrashDemo(
            ["run", "--storage", setup.storage.path], reportDirectory: setup.reports, withClient: true,
            environment: environment)
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let first = try #require(sessions().first)
        #expect(
            sessions().filter { $0["sid"] == first["sid"] }.map { $0["status"] } == ["ok", "crashed"], "\(sessions())")
    }

    /// A container's only process (pid 1 of its PID namespace) takes every process of the namespace with it when it
    /// dies: its crash handler waits for the sender, so the event is at the collector by the time the process is gone.
    @Test func aContainersOnlyProcessWaitsForItsSender() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = [
            "--pid", "--fork", DemoBuild.debug.executable.path, "crash", "null-write", "--storage", setup.storage.path,
            "--report-dir", setup.reports.path, "--sender-timeout-ms", "15000",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment.merge(setup.environment) { _, new in new }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        let stderr = String(decoding: try await runReadingToEnd(process, reading: errors), as: UTF8.self)
        guard !stderr.contains("unshare:") else {
            print("pid 1 test skipped: \(stderr)")  // no PID namespaces here (not root, or a container without them)
            return
        }
        #expect(try setup.exceptions().count == 1, "\(stderr)")
        #expect(CrashReportStore(directory: setup.reports).pendingReports().isEmpty)
    }

    /// A launch that dies of its own crash while another of its threads symbolicates a report did not die of
    /// symbolication: the marker goes, and the report's sender symbolicates it. Only a crash on the symbolicating
    /// thread itself keeps the marker (the report then goes out raw, instead of ending every launch).
    @Test(arguments: [("crash-while-symbolicating", false), ("crash-inside-symbolicating", true)])
    func aCrashElsewhereDoesNotBlameSymbolication(scenario: String, markerKept: Bool) async throws {
        let run = try await runCrashDemo(["scenario", scenario], label: "symbolicating")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGSEGV)
        #expect(run.reportFiles.count == 1)
        let marker = run.reportDirectory.appendingPathComponent("earlier.json.symbolicating")
        #expect(FileManager.default.fileExists(atPath: marker.path) == markerKept)
    }
}
