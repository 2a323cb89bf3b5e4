import Cohorly
import CohorlyCollector
import CohorlyCrash
import Foundation
import Testing

/// Breadcrumbs, with real CrashDemo processes: the last `track` calls, identity changes and app breadcrumbs are in
/// the crash report (oldest first, within the byte cap, whole while other threads add more), on the
/// `$exception` event, and in `cohorly crashes show`.
@Suite("Breadcrumbs in crash reports and events")
struct BreadcrumbTests {
    /// Runs a breadcrumb scenario with the client (its queue in `root`, a collector that is not there unless
    /// `environment` names one) and returns the run and its one report.
    static func crash(
        _ scenario: String, _ extra: [String] = [], root: URL, environment: [String: String] = [:]
    ) async throws -> (CrashDemoRun, CrashReport) {
        let run = try await runCrashDemo(
            ["scenario", scenario, "--storage", root.appendingPathComponent("storage").path] + extra,
            reportDirectory: root.appendingPathComponent("reports"), withClient: true,
            environment: ["COHORLY_HOST": "http://127.0.0.1:9"].merging(environment) { _, new in new })
        #expect(run.signal == SIGSEGV, "\(run.stdout) \(run.stderr)")
        let report = try #require(try run.reports().first)
        return (run, report)
    }

    @Test func theLastFiftyOfSixtyTracksReachTheReportTheEventAndCrashesShowInOrder() async throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["demo-token"]
        configuration.adminToken = "read-secret"
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        defer { collector.stop() }
        let root = try makeTemporaryDirectory("breadcrumbs")
        defer { removeLaunchDirectory(root) }
        let host = collector.baseURL.absoluteString
        let environment = ["COHORLY_HOST": host, "COHORLY_TOKEN": "demo-token"]
        let started = UInt64(Date().timeIntervalSince1970 * 1000)

        let (_, report) = try await Self.crash("tracks-then-crash", root: root, environment: environment)
        let crumbs = try #require(report.breadcrumbs)
        #expect(crumbs.map(\.message) == (11...60).map { "event-\($0)" })
        #expect(crumbs.allSatisfy { $0.category == "track" })
        #expect(crumbs.map { $0.data["n"] } == (11...60).map { .int($0) })
        #expect(crumbs.last?.data == ["n": 60, "screen": "screen-60"])
        #expect(report.breadcrumbsDropped == 0)
        let times = crumbs.map(\.timestampMs)
        #expect(times == times.sorted())
        #expect(times.first.map { $0 >= started - 1000 } == true)
        #expect(times.last.map { $0 <= report.timestampMs } == true)

        // The next launch sends the event: the same breadcrumbs, oldest first, with RFC 3339 times.
        let next = try await runCrashDemo(
            ["run", "--storage", root.appendingPathComponent("storage").path, "--sender-timeout-ms", "15000"],
            reportDirectory: root.appendingPathComponent("reports"), withClient: true, environment: environment)
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let event = try #require(
            try await delivered { try collector.store.events(matching: EventQuery(event: "$exception", limit: 10)) }
                .first)
        let properties = try #require(CohorlyValue(json: event.propertiesJSON)?.objectValue)
        let sent = try #require(properties["$exception_breadcrumbs"]?.arrayValue)
        #expect(sent.count == 50)
        #expect(sent.map { $0["message"]?.stringValue ?? "" } == crumbs.map(\.message))
        #expect(sent.first?["category"] == "track")
        #expect(sent.first?["type"] == "default" && sent.first?["level"] == "info")
        #expect(sent.first?["data"] == ["n": 11, "screen": "screen-11"])
        let expectedTimes = crumbs.map { RFC3339.format(milliseconds: Int64($0.timestampMs)) }
        #expect(sent.map { $0["timestamp"]?.stringValue ?? "" } == expectedTimes)
        #expect(EventSchema.violations(properties) == [])

        // `cohorly crashes show` prints them under the crash, oldest first.
        let cli = DemoBuild.debug.executable.deletingLastPathComponent().appendingPathComponent("cohorly").path
        let shown = try await SymbolicatedCrashTests.tool(
            cli, ["crashes", "show", report.insertId, "--host", host, "--auth-token", "read-secret"])
        #expect(shown.status == 0)
        let lines = shown.output.split(separator: "\n").map(String.init)
        let heading = try #require(lines.firstIndex(of: "Breadcrumbs (50, oldest first):"), "\(shown.output)")
        let listed = lines[(heading + 1)...].prefix(50)
        #expect(listed.count == 50)
        #expect(listed.first == "  \(expectedTimes[0])  track     event-11  {\"n\":11,\"screen\":\"screen-11\"}")
        #expect(listed.last?.contains("track     event-60  ") == true)
        #expect(!shown.output.contains("event-10 "))
    }

    @Test func aHandledErrorCarriesTheBreadcrumbsOfTheMomentItWasCaptured() async throws {
        // In this process (the ring is the test runner's; no other in-process test adds breadcrumbs).
        let setup = try CaptureErrorTests.Setup()
        defer { setup.finish() }
        let marker = "before-error-\(UUID().uuidString)"
        setup.client.addBreadcrumb(marker, category: "test", data: ["step": 1])
        parseOrderAndCapture(setup.client)
        setup.client.addBreadcrumb(marker + "-after")
        #expect(await setup.client.flush())
        let event = try #require(try setup.exceptions().first)
        let crumbs = try #require(event["$exception_breadcrumbs"]?.arrayValue)
        let mine = crumbs.filter { $0["message"]?.stringValue?.hasPrefix(marker) == true }
        #expect(mine.map { $0["message"] } == [.string(marker)])
        #expect(mine.first?["category"] == "test")
        #expect(mine.first?["data"] == ["step": 1])
        // The capturing task's breadcrumbs come first (other in-process tests' tasks add theirs after them): the
        // last of this task's is the marker, the one after it was added after the capture.
        let ownTask = crumbs.filter { $0["task"] != nil && $0["task"] == event["$exception_task"] }
        #expect(ownTask.last?["message"] == .string(marker), "\(crumbs)")
    }

    @Test func theNumberKeptIsAnOption() async throws {
        let root = try makeTemporaryDirectory("breadcrumbs-max")
        defer { removeLaunchDirectory(root) }
        let (_, report) = try await Self.crash(
            "tracks-then-crash", ["--max-breadcrumbs", "10", "--tracks", "15"], root: root)
        #expect(report.breadcrumbs?.map(\.message) == (6...15).map { "event-\($0)" })
    }

    @Test func identityChangesAndAppBreadcrumbsAreRecordedAndCut() async throws {
        let root = try makeTemporaryDirectory("breadcrumbs-identity")
        defer { removeLaunchDirectory(root) }
        let (run, report) = try await Self.crash("breadcrumbs-then-crash", root: root)
        let anonymous = try #require(run.stdout.split(separator: " ").last.map { String($0.dropLast()) })
        let crumbs = try #require(report.breadcrumbs)
        #expect(
            crumbs.map(\.category) == [
                "identity", "identity", "ui", "track", String(repeating: "c", count: 32), "identity",
            ])
        #expect(crumbs.map(\.message).prefix(4) == ["identify", "alias", "cart opened", "Checkout"])
        #expect(crumbs[0].data == ["distinct_id": "crumb-user"])
        #expect(crumbs[1].data == ["alias": "crumb-alias", "distinct_id": "crumb-user"])
        // The app's literal dictionary is of Doubles: 3 is written (and read back) as 3.0.
        #expect(crumbs[2].data == ["items": 3.0, "total": 9.5, "coupon": nil])
        // A track call's breadcrumb summarizes its properties: the first 8 keys by name, nested values counted.
        let checkout = crumbs[3].data
        #expect(checkout.count == 9)
        #expect(checkout["cart"] == "{1 keys}")
        #expect(checkout["key-0"] == 0 && checkout["key-14"] == 14 && checkout["long"] == nil)
        #expect(checkout["$more_keys"] == 14)
        // A long message is cut at 256 bytes, on a character boundary (é is two bytes).
        #expect(crumbs[4].message == String(repeating: "é", count: 128))
        #expect(crumbs[5].message == "reset" && crumbs[5].data == ["distinct_id": .string(anonymous)])
        #expect(anonymous.count == 36)
    }

    @Test func theByteCapHoldsWithHugeBreadcrumbs() async throws {
        let root = try makeTemporaryDirectory("breadcrumbs-huge")
        defer { removeLaunchDirectory(root) }
        let (run, report) = try await Self.crash("huge-breadcrumbs", root: root)
        let crumbs = try #require(report.breadcrumbs)
        // The member as written, from `"breadcrumbs":` to its closing bracket.
        let text = try String(contentsOf: try #require(run.reportFiles.first), encoding: .utf8)
        let start = try #require(text.range(of: "\"breadcrumbs\":[")?.lowerBound)
        let end = try #require(text.range(of: "],\"breadcrumbs_dropped\":")?.upperBound)
        #expect(text[start..<end].utf8.count <= Breadcrumb.maxReportBytes)
        // The newest are kept; the ring held 50, the rest are counted as dropped.
        #expect(!crumbs.isEmpty && crumbs.count < 50)
        let numbers: [Int] = crumbs.map { crumb in
            let parts = crumb.message.split(separator: "-")
            return parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        }
        #expect(numbers == Array(61 - crumbs.count...60))
        #expect(report.breadcrumbsDropped == 50 - crumbs.count)
        #expect(crumbs.allSatisfy { $0.message.utf8.count <= Breadcrumb.maxMessageBytes })
        #expect(crumbs.last?.data == ["blob": .string(String(repeating: "\u{02}", count: 64))])
    }

    @Test func aCrashSkipsTheSlotOfAWriterThatNeverFinishesAndDoesNotWait() async throws {
        let root = try makeTemporaryDirectory("breadcrumbs-stalled")
        defer { removeLaunchDirectory(root) }
        // A ring of 5: the sixth breadcrumb is halfway into the slot of the first when the process crashes.
        let (run, report) = try await Self.crash("breadcrumb-stalled", ["--max-breadcrumbs", "5"], root: root)
        #expect(run.stdout.contains("stalled\n") && !run.stdout.contains("not stalled"))
        #expect(report.breadcrumbs?.map(\.message) == (2...5).map { "before-\($0)" })
        #expect(report.breadcrumbsDropped == 1)
    }

    @Test(arguments: 0..<3) func writersOnOtherThreadsDoNotTearTheReport(_ round: Int) async throws {
        let root = try makeTemporaryDirectory("breadcrumbs-race-\(round)")
        defer { removeLaunchDirectory(root) }
        let (run, report) = try await Self.crash("breadcrumb-race", root: root)
        // The file is valid JSON as written (not only as the salvager would repair it).
        let data = try Data(contentsOf: try #require(run.reportFiles.first))
        #expect((try? JSONSerialization.jsonObject(with: data)) != nil)
        #expect(report.complete)
        let crumbs = try #require(report.breadcrumbs)
        #expect(crumbs.count + (report.breadcrumbsDropped ?? 0) == 50)
        #expect(crumbs.count >= 45)
        var last: [Int: Int] = [:]
        for crumb in crumbs {
            let parts = crumb.message.dropFirst().split(separator: "-").compactMap { Int($0) }
            guard crumb.message.hasPrefix("w"), parts.count == 2 else {
                Issue.record("unexpected breadcrumb \(crumb)")
                continue
            }
            let (worker, n) = (parts[0], parts[1])
            // Each slot is whole: its data belongs to its message.
            #expect(crumb.category == (n % 2 == 0 ? "app" : "track"))
            #expect(crumb.data["n"] == .int(n))
            if n % 2 == 0 { #expect(crumb.data["worker"] == .int(worker)) }
            // Oldest first: each worker's numbers rise.
            #expect(n > last[worker, default: 0])
            last[worker] = n
        }
    }
}
