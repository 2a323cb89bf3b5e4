import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlyCrash

/// A real async crash (CrashDemo `crash async-actor`: an actor method force-unwraps nil, awaited by `price`,
/// `checkout`, `handleRequest`, the task closure) made into its `$exception` event on the device, then read back
/// and symbolicated off the device (issue 22 items 2 and 3).
@Suite struct AsyncCrashEventTests {
    static let callers = ["price", "checkout", "handleRequest", "startCheckoutTask"]

    /// Whether `names` holds `expected` in that order (other names may come between).
    static func inOrder(_ expected: [String], _ names: [String]) -> Bool {
        var rest = names[...]
        for name in expected {
            guard let found = rest.firstIndex(where: { $0.contains(name) }) else { return false }
            rest = rest[(found + 1)...]
        }
        return true
    }

    @Test func theEventAndCrashesShowListTheAwaitingFunctionsInOrder() async throws {
        let run = try await runCrashDemo(["crash", "async-actor"], label: "async-event")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let report = try #require(try run.reports().first, "\(run.stderr)")
        #expect(report.format == CrashReportFormat.v2)
        let chain = try #require(report.crashedThread?.async, "no async chain")
        #expect(chain.frames.allSatisfy { $0.kind == .asyncResume })
        let event = ExceptionBuilder.make(from: report, symbols: ExceptionBuilder.symbolicate(report)).properties
        #expect(EventSchema.violations(event) == [])
        let stacktrace = try #require(event["$exception_list"]?.arrayValue?.first?["stacktrace"])
        // PostHog's order: oldest first. Innermost first here, physical frames only.
        let frames = (stacktrace["frames"]?.arrayValue ?? []).reversed().filter { $0["inline"] != true }
        let asyncNames = frames.filter { $0[CapturedException.frameKindKey] == "async_resume" }
            .compactMap { $0["function"]?.stringValue }
        #expect(Self.inOrder(Self.callers, asyncNames), "\(asyncNames)")
        let firstAsync = try #require(frames.firstIndex { $0[CapturedException.frameKindKey] == "async_resume" })
        #expect(frames[..<firstAsync].contains { $0["function"]?.stringValue?.contains("discountPercent") == true })
        // The executor frames come after the async callers.
        let afterAsync = frames[firstAsync...].drop { $0[CapturedException.frameKindKey] == "async_resume" }
        #expect(afterAsync.contains { $0["function"]?.stringValue?.contains("swift_job_run") == true })
        #expect(stacktrace[CapturedException.asyncStopKey] == .string(chain.stop.rawValue))
        // Off the device: the collector stores the event and symbolicates it again from the binary.
        let collector = try Collector(configuration: CollectorConfiguration())
        let stored = CollectorStore.NewEvent(
            token: "t", event: "$exception", distinctId: "u", time: Int64(report.timestampMs),
            insertId: report.insertId, propertiesJSON: CohorlyValue.object(event).jsonString)
        _ = try collector.store.insert(events: [stored], receivedAt: 0)
        let directory = try makeTemporaryDirectory("async-event-debug")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(
            atPath: report.executable, toPath: directory.appendingPathComponent("CrashDemo").path)
        let queries = CrashQueries(
            store: collector.store, debugFiles: collector.debugFiles, extraDirectories: [directory.path])
        let shown = try #require(try queries.show(insertId: report.insertId))
        let thread = try #require(shown["crash"]?["threads"]?.arrayValue?.first)
        let shownCallers = (thread["async_frames"]?.arrayValue ?? []).compactMap {
            $0["symbols"]?.arrayValue?.last?["function"]?.stringValue
        }
        #expect(Self.inOrder(Self.callers, shownCallers), "\(shownCallers)")
        #expect(thread["async_anchor"]?.intValue == chain.anchor)
    }
}
