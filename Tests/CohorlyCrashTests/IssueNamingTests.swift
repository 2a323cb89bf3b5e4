import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry
import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlyCrash

/// One issue per bug, titled as people read it (issue 38 part 3), on CrashDemo's server scenarios built debug and
/// release: a force-unwrap in a small accessor a release build inlines into the struct method that calls it (by
/// two routes, one through a `withSpan`-like wrapper), an index out of range, and a generic handler a release
/// build specializes. Each crash is made into its event on the device as the next launch makes it.
@Suite struct IssueNamingTests {
    /// The server crashes, each built debug and release: scenario → build → event properties.
    static let crashes = ServerCrashEvents()

    /// What each bug's issue shows, whichever build it came from.
    static let bugs: [(scenarios: [String], subtitle: String, culprit: String)] = [
        (
            ["server-unwrap", "server-unwrap-traced"], "Unexpectedly found nil while unwrapping an Optional value",
            "CatalogStore.discountPercent(for:)"
        ),
        (["server-index"], "Index out of range", "PricingService.lineTotal(at:)"),
        (
            ["server-generic"], "Unexpectedly found nil while unwrapping an Optional value",
            "OrdersController.lineItem<A>(id:context:)"
        ),
    ]

    @Test func debugAndReleaseBuildsOfOneBugAreOneIssueWithOneTitle() async throws {
        let events = try await Self.crashes.events()
        let collector = try IssueCollector()
        for (scenario, builds) in events {
            for (build, properties) in builds {
                #expect(collector.track(properties, insertId: "\(scenario)-\(build)") == 200)
            }
        }
        let issues = try collector.list()
        #expect(issues.count == Self.bugs.count, "\(issues.map { $0["culprit"]?.stringValue ?? "" })")
        for bug in Self.bugs {
            let issue = try #require(issues.first { $0["culprit"]?.stringValue == bug.culprit }, "\(issues)")
            #expect(issue["occurrences"]?.intValue == bug.scenarios.count * DemoBuild.allCases.count, "\(issue)")
            #expect(issue["title"] == "Fatal error", "\(issue)")
            #expect(issue["subtitle"]?.stringValue == bug.subtitle, "\(issue)")
        }
    }

    /// Each wire's frame `function` is the short name the stack text prints, the full name beside it as
    /// `raw_function`: on the `$exception` event (PostHog's cymbal keeps what it knows and drops the rest), read
    /// back whole by the collector; on Sentry's event, which Sentry's own normalizer (`sentry_relay`) keeps as sent.
    @Test func theWiresCarryTheShortNameAndTheFullOne() async throws {
        let events = try await Self.crashes.events()
        let report = try #require(await Self.crashes.report("server-generic", .release))
        let crash = ExceptionBuilder.exception(from: report, symbols: ExceptionBuilder.symbolicate(report))
        // `$exception`: the frame of the generic handler, short; the full name the specialized one.
        let properties = try #require(events["server-generic"]?[.release])
        let frames = properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        let handler = try #require(frames.last { $0["function"] == "OrdersController.lineItem<A>(id:context:)" })
        let full = handler["raw_function"]?.stringValue ?? ""
        #expect(full.contains("CrashDemo.OrdersController.lineItem<"), "\(full)")
        #expect(full.contains("specialization"), "release: the specialized function \(full)")
        #expect(handler["symbol"]?.stringValue?.hasPrefix("$s9CrashDemo") == true, "\(handler)")
        // Read back, the model holds the full name and the short one.
        let read = CapturedException(exceptionEvent: .object(properties))
        let symbols = read.threads.first?.allFrames.flatMap(\.symbols) ?? []
        #expect(symbols.contains { $0.function == full && $0.shortFunction == handler["function"]?.stringValue })
        // Sentry: the same short and full names, kept by Sentry's normalizer.
        let record = ExceptionBuilder.record(crash)
        let sentry = SentryEvent.value(
            record, configuration: try SentryConfiguration(dsn: "http://key@127.0.0.1:9/1"))
        let normalized = try await sentryNormalized(eventsJSON: CohorlyValue.array([sentry]).jsonString)
        let event = try #require(normalized.first.flatMap { CohorlyValue(json: $0) })
        #expect(event["errors"] == nil, "\(event["errors"] ?? CohorlyValue.null)")
        let sentryFrames =
            event["exception"]?["values"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        let sentryHandler = try #require(
            sentryFrames.last { $0["function"] == "OrdersController.lineItem<A>(id:context:)" }, "\(sentryFrames)")
        #expect(sentryHandler["raw_function"]?.stringValue == full, "\(sentryHandler)")
        // No frame of either wire is named by an async piece or a specialization (a thunk of one stays a thunk).
        for frame in frames + sentryFrames {
            let function = frame["function"]?.stringValue ?? ""
            #expect(FunctionName.normalized(function) == function, "\(function)")
            #expect(!function.contains("partial function for"), "\(function)")
        }
    }
}

/// `$exception` events of CrashDemo's server scenarios, debug and release, made once.
actor ServerCrashEvents {
    typealias Events = [String: [DemoBuild: [String: CohorlyValue]]]

    private var made: Task<(Events, [String: [DemoBuild: CrashReport]]), any Error>?

    func events() async throws -> Events { try await all().0 }

    func report(_ scenario: String, _ build: DemoBuild) async throws -> CrashReport? {
        try await all().1[scenario]?[build]
    }

    private func all() async throws -> (Events, [String: [DemoBuild: CrashReport]]) {
        if let made { return try await made.value }
        let task = Task { try await Self.make() }
        made = task
        return try await task.value
    }

    private static func make() async throws -> (Events, [String: [DemoBuild: CrashReport]]) {
        let runs = IssueNamingTests.bugs.flatMap(\.scenarios).flatMap { scenario in
            DemoBuild.allCases.map { (scenario, $0) }
        }
        return try await withThrowingTaskGroup(of: (String, DemoBuild, CrashReport).self) { group in
            for (scenario, build) in runs {
                group.addTask {
                    let run = try await runCrashDemo(["scenario", scenario], build: build, label: scenario)
                    defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
                    let report = try #require(try run.reports().first, "\(scenario) \(build): no report\n\(run.stderr)")
                    return (scenario, build, report)
                }
            }
            var events: Events = [:]
            var reports: [String: [DemoBuild: CrashReport]] = [:]
            for try await (scenario, build, report) in group {
                events[scenario, default: [:]][build] =
                    ExceptionBuilder.make(from: report, symbols: ExceptionBuilder.symbolicate(report)).properties
                reports[scenario, default: [:]][build] = report
            }
            return (events, reports)
        }
    }
}
