import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry
import CohorlyCollector
@testable import CohorlyCollectorCore
import Foundation
import TestWaiting
import Testing

@testable import CohorlyCrash

/// The frame kinds on the Sentry wire (issue 24): crashes, handled errors and async callers sent through the
/// Sentry destination to the real collector are looked up off the device where the device looked them up — the
/// crash site at its exact address, return addresses one byte back, async resume points as they are — as the
/// device and llvm-symbolizer do.
@Suite struct SentryFrameKindTests {
    /// A collector taking Sentry envelopes for project 1 with the key `test-token`.
    struct Collecting {
        let collector: Collector
        let root: URL
        var dsn: String { "http://test-token@127.0.0.1:\(collector.baseURL.port ?? 0)/1" }

        init() throws {
            var configuration = CollectorConfiguration()
            configuration.tokens = ["test-token"]
            collector = try Collector(configuration: configuration)
            try collector.start()
            root = try makeTemporaryDirectory("sentry-kinds")
        }

        /// The stored `$exception` events' properties.
        func exceptions() throws -> [CohorlyValue] {
            try collector.store.events(matching: EventQuery(event: "$exception")).compactMap {
                CohorlyValue(json: $0.propertiesJSON)
            }
        }

        /// `crashes show` of `event`, the collector searching a directory holding a copy of `executable`.
        func show(_ event: CohorlyValue, executable: String) throws -> CohorlyValue {
            let directory = root.appendingPathComponent("debug-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: executable, toPath: directory.appendingPathComponent("binary").path)
            let queries = CrashQueries(
                store: collector.store, debugFiles: collector.debugFiles, extraDirectories: [directory.path])
            let insertId = try #require(event["$insert_id"]?.stringValue)
            return try #require(try queries.show(insertId: insertId))
        }

        func finish() {
            collector.stop()
            removeLaunchDirectory(root)
        }
    }

    /// The line llvm-symbolizer gives for `frame` (a `$exception` frame) looked up as its kind says.
    static func referenceLine(_ frame: CohorlyValue, in executable: String) throws -> Int {
        let address = try #require(frame["instruction_addr"]?.stringValue.flatMap(Address.init(hex:)))
        let base = try #require(frame["image_addr"]?.stringValue.flatMap(Address.init(hex:)))
        let kind = Frame.Kind(wireName: frame[CapturedException.frameKindKey]?.stringValue ?? "")
        let lookup = Frame(address, kind: kind).lookupAddress
        return try OffDeviceLineTests.referenceLine(executable, offset: lookup - base.value).line
    }

    @Test func aCrashSentThroughSentryIsLookedUpAtItsExactAddress() async throws {
        let collecting = try Collecting()
        defer { collecting.finish() }
        let (event, _) = try await Self.crashAndSend("null-write", collecting)
        let site = CaptureErrorTests.siteFrames(event)
        try #require(site.count >= 2, "\(event)")
        #expect(site[0][CapturedException.frameKindKey] == "pc")
        #expect(site[1][CapturedException.frameKindKey] == "return_address")
        #expect(site[0]["function"]?.stringValue?.contains("demo_null_write") == true, "\(site[0])")
        let executable = DemoBuild.debug.executable.path
        let crashLine = try Self.referenceLine(site[0], in: executable)
        let callerLine = try Self.referenceLine(site[1], in: executable)
        #expect(site[0]["lineno"]?.intValue == crashLine)
        #expect(site[1]["lineno"]?.intValue == callerLine)
        let shown = try collecting.show(event, executable: executable)
        let frames = try #require(shown["crash"]?["threads"]?.arrayValue?.first?["frames"]?.arrayValue)
        #expect(frames[0]["kind"] == "pc")
        #expect(frames[0]["instruction_addr"] == site[0]["instruction_addr"])
        #expect(frames[0]["symbols"]?.arrayValue?.last?["line"]?.intValue == crashLine, "\(frames[0])")
        #expect(frames[1]["kind"] == "return_address")
        #expect(frames[1]["instruction_addr"] == site[1]["instruction_addr"])
        #expect(frames[1]["symbols"]?.arrayValue?.last?["line"]?.intValue == callerLine, "\(frames[1])")
    }

    @Test func asyncCallersSentThroughSentryStayAsyncResumePoints() async throws {
        let collecting = try Collecting()
        defer { collecting.finish() }
        let expectation = try #require(AsyncCrashExpectation.all.first { $0.kind == "async-actor" })
        let (event, report) = try await Self.crashAndSend(expectation.kind, collecting)
        // On Sentry's wire: no single adjustment fits a stack with async callers, so the return addresses
        // are sent stepped back (`none`) and the task's root is the start of the chained stack.
        let record = ExceptionBuilder.record(from: report, symbols: ExceptionBuilder.symbolicate(report))
        let sentry = SentryEvent.value(record, configuration: try SentryConfiguration(dsn: collecting.dsn))
        let refused = try await sentryNormalizerErrors(eventsJSON: CohorlyValue.array([sentry]).jsonString)
        #expect(refused == [], "\(refused)")
        let stacktrace = try #require(sentry["exception"]?["values"]?.arrayValue?.first?["stacktrace"])
        #expect(stacktrace["instruction_addr_adjustment"] == "none")
        let wire = stacktrace["frames"]?.arrayValue ?? []
        let root = try #require(wire.firstIndex { $0[CapturedException.frameKindKey] == "async_resume" })
        #expect(wire[root]["stack_start"] == true)
        #expect(wire.filter { $0["stack_start"] == true }.count == 1)
        // Stored and shown by the collector: the return addresses as the device had them, the async frames
        // after their anchor, each looked up as it is.
        let site = CaptureErrorTests.siteFrames(event)
        #expect(site.first?[CapturedException.frameKindKey] == "pc")
        let shown = try collecting.show(event, executable: DemoBuild.debug.executable.path)
        let thread = try #require(shown["crash"]?["threads"]?.arrayValue?.first)
        let asyncFrames = thread["async_frames"]?.arrayValue ?? []
        #expect(!asyncFrames.isEmpty, "\(thread)")
        #expect(asyncFrames.allSatisfy { $0["kind"] == "async_resume" })
        let callers = asyncFrames.map { $0["symbols"]?.arrayValue?.last?["function"]?.stringValue ?? "" }
        #expect(appearInOrder(expectation.callers, in: callers), "\(callers)")
        #expect(thread["async_stop"] == "task_root")
        let physical = thread["frames"]?.arrayValue ?? []
        #expect(physical.dropFirst().allSatisfy { $0["kind"] == "return_address" })
        // The report's addresses, return addresses too, are what the collector holds again.
        let crashed = try #require(report.crashedThread)
        #expect(physical.compactMap { $0["instruction_addr"]?.stringValue } == crashed.frames.map(\.description))
        #expect(
            asyncFrames.compactMap { $0["instruction_addr"]?.stringValue } == crashed.async?.frames.map(\.description))
    }

    @Test func aHandledErrorSentThroughSentryIsLookedUpOnTheCatchingLine() async throws {
        let collecting = try Collecting()
        defer { collecting.finish() }
        var options = CohorlyOptions()
        options.storageDirectory = collecting.root.appendingPathComponent("storage")
        options.flushInterval = 3600
        options.flushAt = 1_000_000
        options.loadFeatureFlags = false
        options.logHandler = { _ in }
        var sentry = try SentryConfiguration(dsn: collecting.dsn)
        sentry.sessions = false
        let client = Cohorly(sentry: sentry, options: options)
        defer { client.shutdown() }
        captureThenCount(client, OrderParseError(line: 5), ["order": "A-5"])
        #expect(await client.flush())
        let event = try #require(try collecting.exceptions().first)
        let site = try #require(CaptureErrorTests.siteFrames(event).first)
        #expect(site[CapturedException.frameKindKey] == "return_address")
        #expect(site["function"]?.stringValue?.contains("captureThenCount") == true, "\(site)")
        let executable = LiveStack.executablePath
        let line = try Self.referenceLine(site, in: executable)
        #expect(site["lineno"]?.intValue == line)
        let shown = try collecting.show(event, executable: executable)
        let top = try #require(shown["crash"]?["threads"]?.arrayValue?.first?["frames"]?.arrayValue?.first)
        #expect(top["kind"] == "return_address")
        #expect(top["symbols"]?.arrayValue?.last?["line"]?.intValue == line, "\(top)")
    }

    /// Crashes CrashDemo (`kind`) with the Sentry destination pointed at the collector, lets the next launch
    /// send it; returns the stored `$exception` properties and the crash's report.
    static func crashAndSend(_ kind: String, _ collecting: Collecting) async throws -> (CohorlyValue, CrashReport) {
        let environment = ["COHORLY_DESTINATION": "sentry", "COHORLY_SENTRY_DSN": collecting.dsn]
        func launch(_ arguments: [String]) async throws -> CrashDemoRun {
            try await runCrashDemo(
                arguments + [
                    "--storage", collecting.root.appendingPathComponent("storage").path, "--sender-timeout-ms",
                    "15000",
                ],
                reportDirectory: collecting.root.appendingPathComponent("reports"), withClient: true,
                environment: environment)
        }
        let crash = try await launch(["crash", kind])
        #expect(crash.signal != nil, "\(crash.stderr)")
        let report = try #require(try crash.reports().first, "no report: \(crash.stderr)")
        let next = try await launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let event = try #require(
            try await delivered { try collecting.exceptions() }.first, "nothing stored: \(next.stderr)")
        return (event, report)
    }
}
