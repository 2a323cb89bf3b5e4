import Cohorly
@testable import CohorlyCrash
import Foundation
import TestWaiting
import Testing

/// Every event CohorlyCrash produces, from real crashes (every CrashDemo kind, debug and release, stripped and
/// not), symbolicated on the device as the next launch does, held against the rules of PostHog error tracking
/// (`EventSchema`): a missing required field or a wrong type fails.
@Suite("$exception events from real crashes meet the schema")
struct ExceptionEventSchemaTests {
    /// CrashDemo of `build`, as built or copied and stripped of every symbol table and debug section.
    static func demo(_ build: DemoBuild, stripped: Bool, in root: URL) async throws -> URL {
        guard stripped else { return build.executable }
        let copy = root.appendingPathComponent("CrashDemo")
        try copyExecutable(from: build.executable.path, to: copy.path)
        #expect(try await SymbolicatedCrashTests.tool("/usr/bin/strip", ["--strip-all", copy.path]).status == 0)
        return copy
    }

    /// The event the next launch makes for `report` (the same calls as delivery).
    static func event(for report: CrashReport) -> Properties {
        ExceptionBuilder.make(from: report, symbols: ExceptionBuilder.symbolicate(report)).properties
    }

    @Test(arguments: DemoBuild.allCases, [false, true])
    func everyCrashKindGivesAValidEvent(_ build: DemoBuild, stripped: Bool) async throws {
        let root = try makeTemporaryDirectory("schema")
        defer { try? FileManager.default.removeItem(at: root) }
        let executable = try await Self.demo(build, stripped: stripped, in: root)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for expectation in CrashExpectation.all {
                group.addTask {
                    let run = try await runCrashDemo(
                        ["crash", expectation.kind], executable: executable,
                        reportDirectory: root.appendingPathComponent(expectation.kind))
                    let report = try #require(try run.reports().first, "\(expectation.kind): no report")
                    let context = "\(expectation.kind) (\(build), stripped: \(stripped))"
                    let raw = ExceptionBuilder.make(from: report).properties
                    #expect(EventSchema.violations(raw) == [], "\(context), raw")
                    let event = Self.event(for: report)
                    #expect(EventSchema.violations(event) == [], "\(context)")
                    Self.checkReason(event, expectation, build: build, stripped: stripped, context: context)
                    if !stripped { Self.checkSymbolicated(event, expectation, context: context) }
                }
            }
            try await group.waitForAll()
        }
    }

    /// The exception names the real failure.
    static func checkReason(
        _ event: Properties, _ expectation: CrashExpectation, build: DemoBuild, stripped: Bool, context: String
    ) {
        let type = event["$exception_type"]?.stringValue ?? ""
        let mechanism = event["$exception_list"]?.arrayValue?.first?["mechanism"]?["type"]?.stringValue
        if let cxx = expectation.cxx {
            #expect(type == cxx.type && mechanism == "cxx_exception", "\(context): \(type)")
        } else if let message = expectation.message(for: build) {
            let prefix = message.hasPrefix("Precondition failed") ? "Precondition failed" : "Fatal error"
            #expect(type == prefix && mechanism == "swift_fatal", "\(context): \(type)")
            #expect(event["$issue_name"]?.stringValue?.hasPrefix(prefix) == true, "\(context)")
        } else if expectation.signal == SIGILL && !stripped {
            // A trap without a message: the `Swift runtime failure` frame at the crash site names it.
            #expect(type.hasPrefix("Swift runtime failure: ") && mechanism == "swift_fatal", "\(context): \(type)")
            #expect(event["$issue_name"]?.stringValue == type, "\(context)")
        } else {
            #expect(type.hasPrefix("SIG") && mechanism == "signal", "\(context): \(type)")
        }
    }

    /// Not stripped: the crashed thread's frames name the crashing function, in the app, with file and line.
    static func checkSymbolicated(_ event: Properties, _ expectation: CrashExpectation, context: String) {
        let frames = event["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        let named = frames.filter { $0["function"]?.stringValue?.contains(expectation.function) == true }
        #expect(!named.isEmpty, "\(context): \(expectation.function) not among the frames")
        if let frame = named.first {
            #expect(frame["in_app"] == true && frame["module"] == "CrashDemo", "\(context)")
            #expect(frame["client_resolved"] == true && frame["filename"] != nil, "\(context)")
            #expect((frame["lineno"]?.intValue ?? 0) > 0, "\(context)")
            // A Swift frame's `function` as the stack text shows it (`crashIndexOutOfRange()`), the full name as
            // `raw_function`; a C frame's name as it is.
            let function = frame["function"]?.stringValue ?? ""
            let full = frame["raw_function"]?.stringValue ?? ""
            if frame["lang"] == "swift" {
                #expect(!function.hasPrefix("CrashDemo.") && function.hasSuffix(")"), "\(context): \(function)")
                #expect(full.hasPrefix("CrashDemo.") && full.contains(expectation.function), "\(context): \(full)")
            } else {
                #expect(frame["raw_function"] == nil, "\(context)")
            }
        }
        // The Swift runtime is symbolicated too (its symbol table) and never in the app.
        let runtime = frames.filter { $0["module"]?.stringValue?.hasPrefix("libswiftCore") == true }
        #expect(runtime.allSatisfy { $0["in_app"] == false }, "\(context)")
    }

    @Test func twentyThreadsOfAHundredFramesSymbolicatedStayUnderTheCap() async throws {
        let root = try makeTemporaryDirectory("schema-size")
        defer { try? FileManager.default.removeItem(at: root) }
        for build in DemoBuild.allCases {
            let run = try await runCrashDemo(
                ["crash", "null-write", "--threads", "17", "--depth", "110"], build: build,
                reportDirectory: root.appendingPathComponent(build.rawValue))
            let report = try #require(try run.reports().first)
            #expect(report.allThreads.count == 20)
            #expect(report.allThreads.filter { $0.frames.count == 100 }.count >= 17)
            let symbols = ExceptionBuilder.symbolicate(report, options: .init(symbolicationBudget: .seconds(60)))
            #expect(symbols.threads.allSatisfy { $0 != nil })
            let event = ExceptionBuilder.make(from: report, symbols: symbols).properties
            let bytes = CohorlyValue.object(["event": "$exception", "properties": .object(event)]).jsonString.utf8.count
            #expect(bytes <= 900_000, "\(build): \(bytes) bytes")
            #expect(EventSchema.violations(event) == [], "\(build)")
            let kept = event["$exception_threads"]?.arrayValue?.count ?? 0
            let dropped = event["$exception_threads_dropped"]?.intValue ?? 0
            #expect(kept + dropped == 19, "\(build)")
            #expect(kept > 0, "\(build)")
        }
    }

    @Test func symbolicationCanBeTurnedOffAndAReportWhoseSymbolicationDiedGoesRaw() async throws {
        let run = try await runCrashDemo(["crash", "null-write"], label: "raw")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let store = CrashReportStore(directory: run.reportDirectory)
        let file = try #require(store.pendingReports().first)
        let report = try store.load(file)
        func resolved(_ event: PreparedEvent) -> Int {
            let frames = event.properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue
            return (frames ?? []).filter { $0["function"] != nil }.count
        }
        #expect(resolved(CohorlyCrash.event(for: report, file: file, options: .default).event) > 0)
        #expect(resolved(CohorlyCrash.event(for: report, file: file, options: .init(symbolicate: false)).event) == 0)
        // A marker left by a launch that died while symbolicating: this launch sends the report raw.
        let marker = SymbolicationGuard.markerFile(file.url)
        #expect(FileManager.default.createFile(atPath: marker.path, contents: nil))
        let raw = CohorlyCrash.event(for: report, file: file, options: .default).event
        #expect(resolved(raw) == 0)
        #expect(EventSchema.violations(raw.properties) == [])
        SymbolicationGuard.finished(file.url)
        #expect(!FileManager.default.fileExists(atPath: marker.path))
    }
}
