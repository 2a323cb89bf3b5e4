import Cohorly
import CohorlyCollector
import CohorlyCrash
import Foundation
import Testing

/// Crash → report → next launch → `$exception` event, with real CrashDemo processes and a loopback collector.
@Suite("Crash reports delivered as fatal $exception events")
struct DeliveryTests {
    /// A collector accepting `demo-token`, plus the directories and environment of one app install.
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
            root = try makeTemporaryDirectory("delivery")
        }

        func launch(_ arguments: [String]) async throws -> CrashDemoRun {
            try await runCrashDemo(
                arguments + ["--storage", storage.path, "--sender-timeout-ms", "15000"], reportDirectory: reports,
                withClient: true, environment: environment)
        }

        func exceptions() throws -> [StoredEvent] {
            try collector.store.events(matching: EventQuery(event: "$exception", limit: 1000))
        }

        func finish() {
            removeLaunchDirectory(root)
            collector.stop()
        }
    }

    @Test func aCrashArrivesOnTheNextLaunchWithTheCrashedLaunchsReleaseAndIdentity() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["crash", "fatal-error", "--identify", "crash-user", "--threads", "2"])
        #expect(crash.signal == SIGILL)
        let report = try #require(try crash.reports().first)

        let next = try await setup.launch(["run", "--identify", "later-user", "--version", "2.0.0"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(next.reportFiles.isEmpty)  // deleted once durably queued
        let events = try await delivered { try setup.exceptions() }
        #expect(events.count == 1)
        let event = try #require(events.first)
        #expect(event.insertId == report.insertId)
        #expect(event.time == Int64(report.timestampMs))
        #expect(event.distinctId == "crash-user")
        let properties = try #require(CohorlyValue(json: event.propertiesJSON)?.objectValue)
        #expect(properties["release"] == "CrashDemo@1.0.0")
        #expect(properties["$exception_level"] == "fatal")
        #expect(properties["$exception_type"] == "Fatal error")
        #expect(properties["$exception_message"]?.stringValue?.hasPrefix("demo fatal ✓") == true)
        #expect(properties["$os_version"] == report.context["$os_version"])
        guard case .array(let images)? = properties["$debug_images"] else {
            Issue.record("no debug images")
            return
        }
        // Only the images the frames use; the crashed thread symbolicated on the device.
        #expect(!images.isEmpty && images.count < report.modules.count)
        let frames = properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        #expect(frames.contains { $0["function"]?.stringValue?.contains("crashFatalError") == true })
        #expect(EventSchema.violations(properties) == [])

        // A further launch sends nothing again.
        let third = try await setup.launch(["run"])
        #expect(third.exitStatus == 0)
        #expect(try setup.exceptions().count == 1)
    }

    @Test func identifyAndResetAfterInstallReachTheCrashTimeContext() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        // --identify runs before install in CrashDemo; the crash below happens after an identify at crash time:
        let crash = try await setup.launch(["scenario", "identify-then-crash"])
        #expect(crash.signal == SIGSEGV)
        let report = try #require(try crash.reports().first)
        #expect(report.context["distinct_id"] == "identified-after-install")

        let reset = try await setup.launch(["scenario", "reset-then-crash", "--identify", "before-reset"])
        #expect(reset.signal == SIGSEGV)
        let anonymous = try #require(reset.stdout.split(separator: " ").last.map { String($0.dropLast()) })
        let resetReport = try #require(try reset.reports().first { $0.insertId != report.insertId })
        #expect(resetReport.context["distinct_id"] == .string(anonymous))
        #expect(anonymous != "before-reset" && anonymous.count == 36)
    }

    @Test func superPropertiesRegisteredBeforeTheCrashAreOnTheCrashEvent() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["scenario", "register-then-crash"])
        #expect(crash.signal == SIGSEGV)
        let report = try #require(try crash.reports().first)
        #expect(report.context["super_properties"] == ["plan": "team", "cart": ["items": 2]])
        // The next launch registers other values: the event keeps the crash-time ones.
        let next = try await setup.launch(["run", "--register", "plan=enterprise"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let event = try #require(try await delivered { try setup.exceptions() }.first)
        let properties = try #require(CohorlyValue(json: event.propertiesJSON)?.objectValue)
        #expect(properties["plan"] == "team")
        #expect(properties["cart"] == ["items": 2])
        #expect(properties["seats"] == nil)
    }

    @Test func optedOutUsersGetNoReportAndPendingReportsAreNotSent() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        // A report from a launch that was still opted in…
        let first = try await setup.launch(["crash", "abort"])
        #expect(first.signal == SIGABRT)
        #expect(first.reportFiles.count == 1)
        // …then the user opts out: it is dropped, not sent; and the next crash writes nothing.
        let optedOut = try await setup.launch(["crash", "null-write", "--opt-out", "--crash-after-ms", "300"])
        #expect(optedOut.signal == SIGSEGV)
        #expect(optedOut.reportFiles.isEmpty)
        let next = try await setup.launch(["run"])
        #expect(next.reportFiles.isEmpty)
        #expect(try setup.exceptions().isEmpty)
    }

    @Test func aCrashLoopAtStartupStillReports() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        // Every answer takes 300 ms; every launch crashes once it started its detached sender (the first, with no
        // report to hand over, at once).
        setup.collector.injectFault(Fault(delay: 0.3), count: 10_000)
        for index in 0..<5 {
            let go = setup.root.appendingPathComponent("go-\(index)")
            if index == 0 { #expect(FileManager.default.createFile(atPath: go.path, contents: nil)) }
            async let run = setup.launch(["crash", "null-write", "--until", go.path])
            if index > 0 { try await releaseOnceItsSenderStarted(go) }
            #expect(try await run.signal == SIGSEGV)
        }
        // The detached senders outlive the launches; wait for their work (a safety net, not a timing claim).
        let deadline = Date(timeIntervalSinceNow: 60)
        while try setup.exceptions().count < 4 && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let events = try setup.exceptions()
        #expect(events.count == 4)
        #expect(Set(events.compactMap(\.insertId)).count == 4)
        let fifth = try #require(CrashReportStore(directory: setup.reports).pendingReports().first)
        let fifthId = try CrashReportStore(directory: setup.reports).load(fifth).insertId
        #expect(!events.contains { $0.insertId == fifthId })
    }

    @Test func aCrashLoopThroughPostHogIsTakenOverForTheQueuesDestination() async throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["phc_demo"]
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        defer { collector.stop() }
        // Anything sent the Cohorly API's way is refused: only capture V1 gets through.
        collector.injectFault(Fault(status: 400, path: "/track"), count: 10_000)
        let root = try makeTemporaryDirectory("delivery-posthog")
        defer { removeLaunchDirectory(root) }
        let environment = [
            "COHORLY_HOST": collector.baseURL.absoluteString, "COHORLY_TOKEN": "phc_demo",
            "COHORLY_DESTINATION": "posthog",
        ]
        // Every launch crashes once it started its detached sender, as in the crash loop above: the senders take
        // the reports over and queue them for PostHog, the queue's destination.
        for index in 0..<3 {
            let go = root.appendingPathComponent("go-\(index)")
            if index == 0 { #expect(FileManager.default.createFile(atPath: go.path, contents: nil)) }
            async let run = runCrashDemo(
                [
                    "crash", "null-write", "--until", go.path, "--storage", root.appendingPathComponent("storage").path,
                    "--sender-timeout-ms", "15000",
                ],
                reportDirectory: root.appendingPathComponent("reports"), withClient: true, environment: environment)
            if index > 0 { try await releaseOnceItsSenderStarted(go) }
            #expect(try await run.signal == SIGSEGV)
        }
        let deadline = Date(timeIntervalSinceNow: 60)
        func received() throws -> [StoredEvent] {
            try collector.store.events(matching: EventQuery(event: "$exception", limit: 100))
        }
        while try received().count < 2 && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let events = try received()
        #expect(events.count == 2)
        // The third launch's report waits for the next launch.
        let store = CrashReportStore(directory: root.appendingPathComponent("reports"))
        let waiting = try store.pendingReports().map { try store.load($0).insertId.lowercased() }
        #expect(waiting.count == 1)
        #expect(!events.contains { $0.insertId == waiting.first })
        let properties = try #require(events.first.flatMap { CohorlyValue(json: $0.propertiesJSON) })
        #expect(properties["$exception_level"] == "fatal")
    }
}
