import CohorlyCrash
import Foundation
import Testing

/// What one crash kind must produce.
struct CrashExpectation: Sendable, CustomStringConvertible {
    var kind: String
    var signal: Int32
    /// The function (a substring of its linkage or C name) that must appear among the crashed thread's frames.
    var function: String
    /// Message substring when the runtime leaves one (debug / release); nil means "no message".
    var debugMessage: String?
    var releaseMessage: String?
    var cxx: CrashReport.CxxException? = nil

    var description: String { kind }

    func message(for build: DemoBuild) -> String? { build == .debug ? debugMessage : releaseMessage }

    func mechanism(for build: DemoBuild) -> CrashReport.Mechanism {
        if cxx != nil { return .cxxTerminate }
        return message(for: build) == nil ? .signal : .swiftFatal
    }

    static let fatalText = "demo fatal ✓ ünïcödé \u{1}bell\u{7}tab\t end"

    static let all: [CrashExpectation] = [
        .init(
            kind: "force-unwrap", signal: SIGILL, function: "crashForceUnwrap",
            debugMessage: "Fatal error: Unexpectedly found nil while unwrapping an Optional value",
            releaseMessage: nil),
        .init(
            kind: "fatal-error", signal: SIGILL, function: "crashFatalError",
            debugMessage: "Fatal error: " + fatalText, releaseMessage: "Fatal error: " + fatalText),
        .init(
            kind: "index-out-of-range", signal: SIGILL, function: "crashIndexOutOfRange",
            debugMessage: "Fatal error: Index out of range", releaseMessage: nil),
        .init(
            kind: "integer-overflow", signal: SIGILL, function: "crashIntegerOverflow",
            debugMessage: nil, releaseMessage: nil),
        .init(
            kind: "division-by-zero", signal: SIGILL, function: "crashDivisionByZero",
            debugMessage: "Fatal error: Division by zero", releaseMessage: nil),
        .init(
            kind: "precondition", signal: SIGILL, function: "crashPrecondition",
            debugMessage: "Precondition failed: demo precondition", releaseMessage: nil),
        .init(
            kind: "null-write", signal: SIGSEGV, function: "demo_null_write", debugMessage: nil,
            releaseMessage: nil),
        .init(
            kind: "stack-overflow", signal: SIGSEGV, function: "recurseForever", debugMessage: nil,
            releaseMessage: nil),
        .init(
            kind: "abort", signal: SIGABRT, function: "demo_abort", debugMessage: nil, releaseMessage: nil
        ),
        .init(
            kind: "cxx-exception", signal: SIGABRT, function: "demo_cxx_throw", debugMessage: nil,
            releaseMessage: nil,
            cxx: .init(type: "std::runtime_error", what: "demo C++ failure")),
        .init(
            kind: "bad-cast", signal: SIGABRT, function: "crashBadCast",
            debugMessage: "Could not cast value of type 'Swift.Int'",
            releaseMessage: "Could not cast value of type 'Swift.Int'"),
        .init(
            kind: "sigbus", signal: SIGBUS, function: "demo_sigbus", debugMessage: nil,
            releaseMessage: nil),
        .init(
            kind: "sigfpe", signal: SIGFPE, function: "demo_sigfpe", debugMessage: nil,
            releaseMessage: nil),
        .init(
            kind: "sigtrap", signal: SIGTRAP, function: "demo_sigtrap", debugMessage: nil,
            releaseMessage: nil),
    ]
}

@Suite("Crash matrix: every kind × every place × debug and release, in child processes")
struct CrashMatrixTests {
    static let places = ["main", "thread", "dispatch", "task"]

    @Test(arguments: CrashExpectation.all, DemoBuild.allCases)
    func crashIsRecorded(_ expectation: CrashExpectation, build: DemoBuild) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for place in Self.places {
                group.addTask { try await Self.check(expectation, build: build, place: place) }
            }
            try await group.waitForAll()
        }
    }

    static func check(_ expectation: CrashExpectation, build: DemoBuild, place: String) async throws {
        let run = try await runCrashDemo(
            ["crash", expectation.kind, "--on", place], build: build,
            label: "\(expectation.kind)-\(place)")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let context = "\(expectation.kind) on \(place) (\(build))"
        #expect(
            run.signal == expectation.signal,
            "\(context): exit \(String(describing: run.signal)) \(run.stderr)")
        #expect(run.reportFiles.count == 1, "\(context): \(run.reportFiles.count) reports")
        #expect(run.tornFiles.isEmpty, "\(context)")
        let reports = try run.reports()
        guard let report = reports.first else { return }
        #expect(report.complete)
        #expect(report.signal.number == expectation.signal, "\(context)")
        #expect(report.mechanism == expectation.mechanism(for: build), "\(context): \(report.mechanism)")
        if let message = expectation.message(for: build) {
            #expect(
                report.message?.contains(message) == true,
                "\(context): \(String(describing: report.message))")
        } else {
            #expect(report.message == nil, "\(context): \(String(describing: report.message))")
        }
        #expect(report.cxx == expectation.cxx, "\(context)")
        if expectation.kind == "stack-overflow" {
            #expect(report.stackOverflow, "\(context)")
        }
        if expectation.kind == "null-write" {
            #expect(report.signal.address.value == 0)
        }
        let crashed = try #require(report.crashedThread)
        #expect(crashed.crashed && crashed.tid > 0)
        #expect(
            crashed.frames.first?.value == crashed.registers?["rip"]?.value
                || report.mechanism == .cxxTerminate)
        #expect(report.module(containing: crashed.frames[0]) != nil, "\(context): frame 0 in no module")
        let functions = try await ReferenceSymbolizer.functions(of: crashed, in: report)
        #expect(
            functions.contains { $0.contains(expectation.function) },
            "\(context): \(expectation.function) not among \(functions)")
        // The raw event (no symbols) meets PostHog's rules from every place too.
        #expect(EventSchema.violations(ExceptionBuilder.make(from: report).properties) == [], "\(context)")
        #expect(report.insertId.count == 36)
        #expect(report.context["release"]?.stringValue == "CrashDemo@1.0.0")
    }
}
