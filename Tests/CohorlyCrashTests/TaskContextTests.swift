import CCrashRecorder
import Cohorly
import CohorlyCollector
import Foundation
import Testing

@testable import CohorlyCrash

/// The crashing request's context (issue 38 part 5): breadcrumbs carry the Swift task that added them, a crash
/// carries the task of the crashed thread and that task's context (`CohorlyCrash.withContext`), and every view
/// lists the crashing task's breadcrumbs first, marked. A real CrashDemo process (24 concurrent requests, one
/// crashing) and a loopback collector.
@Suite("Task context and breadcrumbs of concurrent tasks")
struct TaskContextTests {
    @Test func theCrashingRequestsBreadcrumbsComeFirstMarkedWithItsTaskAndContext() async throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["demo-token"]
        configuration.adminToken = "read-secret"
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        defer { collector.stop() }
        let root = try makeTemporaryDirectory("task-breadcrumbs")
        defer { removeLaunchDirectory(root) }
        let host = collector.baseURL.absoluteString
        let environment = ["COHORLY_HOST": host, "COHORLY_TOKEN": "demo-token"]
        let storage = root.appendingPathComponent("storage").path
        let reports = root.appendingPathComponent("reports")

        let crash = try await runCrashDemo(
            ["scenario", "task-breadcrumbs", "--storage", storage], reportDirectory: reports, withClient: true,
            environment: environment)
        #expect(crash.signal == SIGILL || crash.signal == SIGTRAP, "\(crash.stdout) \(crash.stderr)")
        let report = try #require(try crash.reports().first)
        let crumbs = try #require(report.breadcrumbs)
        #expect(crumbs.count == 48)
        let mine = crumbs.filter { $0.message.hasPrefix("request 17 ") }
        #expect(mine.map(\.message) == ["request 17 started", "request 17 loaded"])
        // The report's task is the one that added request 17's breadcrumbs, and no other request's.
        let task = try #require(report.task)
        #expect(mine.allSatisfy { $0.task == task })
        #expect(crumbs.filter { $0.task == task }.count == 2)
        #expect(crumbs.allSatisfy { $0.task != nil })
        #expect(Set(crumbs.compactMap(\.task)).count == 24)
        // In the ring they are interleaved with the other requests' (what made them hard to find).
        #expect(crumbs.last?.task != task)
        #expect(report.taskContext == ["request_id": "req-17"])

        let next = try await runCrashDemo(
            ["run", "--storage", storage, "--sender-timeout-ms", "15000"], reportDirectory: reports,
            withClient: true, environment: environment)
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        // The next launch may hand the report to its detached sender, which sends after the launch has exited.
        try await waitUntil("the crash reached the collector", seconds: 60) {
            ((try? collector.store.events(matching: EventQuery(event: "$exception", limit: 10))) ?? []).first != nil
        }
        let event = try #require(
            try collector.store.events(matching: EventQuery(event: "$exception", limit: 10)).first)
        let properties = try #require(CohorlyValue(json: event.propertiesJSON)?.objectValue)
        #expect(properties["$exception_task"] == .int(Int(task)))
        #expect(properties["request_id"] == "req-17")
        let sent = try #require(properties["$exception_breadcrumbs"]?.arrayValue)
        #expect(sent.count == 48)
        #expect(sent.prefix(2).map { $0["message"]?.stringValue ?? "" } == ["request 17 started", "request 17 loaded"])
        #expect(sent.prefix(2).allSatisfy { $0["crashing_task"] == true && $0["task"] == .int(Int(task)) })
        #expect(sent.dropFirst(2).allSatisfy { $0["crashing_task"] == nil && $0["task"] != .int(Int(task)) })
        #expect(EventSchema.violations(properties) == [])

        // `cohorly crashes show`: the same two first, marked.
        let cli = DemoBuild.debug.executable.deletingLastPathComponent().appendingPathComponent("cohorly").path
        let shown = try await SymbolicatedCrashTests.tool(
            cli, ["crashes", "show", report.insertId, "--host", host, "--auth-token", "read-secret"])
        #expect(shown.status == 0)
        let lines = shown.output.split(separator: "\n").map(String.init)
        let heading = try #require(lines.firstIndex { $0.hasPrefix("Breadcrumbs (48; * the crashing task") })
        let listed = Array(lines[(heading + 1)...].prefix(48))
        #expect(listed.prefix(2).allSatisfy { $0.hasPrefix("* ") && $0.contains("request 17 ") }, "\(listed)")
        #expect(listed.dropFirst(2).allSatisfy { $0.hasPrefix("  ") })
    }

    @Test func anErrorCapturedInAContextCarriesItsTaskAndTags() async throws {
        let setup = try CaptureErrorTests.Setup()
        defer { setup.finish() }
        let task = await CohorlyCrash.withContext(["request_id": "req-9", "route": "/orders"]) {
            await CohorlyCrash.withContext(["route": "/orders/:id"]) {
                await Task.yield()
                parseOrderAndCapture(setup.client)
                return cly_task_current_id()
            }
        }
        #expect(task != 0)
        #expect(CohorlyCrash.currentContext.isEmpty)
        #expect(await setup.client.flush())
        let event = try #require(try setup.exceptions().first)
        #expect(event["request_id"] == "req-9")
        #expect(event["route"] == "/orders/:id")
        #expect(event["$exception_task"] == .int(Int(task)))
    }

    @Test func aContextTooLargeForTheCrashHandlerIsStillKeptForCapturedErrors() {
        let tags = ["blob": String(repeating: "x", count: Int(CLY_MAX_TASK_CONTEXT))]
        CohorlyCrash.withContext(tags) { #expect(CohorlyCrash.currentContext == tags) }
        #expect(cly_task_context_make("{}", 3) == nil)
        #expect(cly_task_context_make("[]", 2) == nil)
    }
}
