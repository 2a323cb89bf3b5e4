import CCrashRecorder
import Foundation
import TestWaiting
import Testing

/// How a crash ends the process: at once after the report (the Swift runtime's backtracer, which symbolicates in
/// the dying process for seconds, runs only when SWIFT_BACKTRACE asks for it), with one line on stderr saying
/// what crashed and where, of the crash's own signal, and with no other thread of the app running again.
/// Real CrashDemo processes.
@Suite("Crash exit")
struct CrashExitTests {
    /// The environment as a server has it: SWIFT_BACKTRACE not set (empty reads as unset, for the runtime and us),
    /// so the runtime's backtracer is on and installed before the recorder.
    static let environmentAsItIs = ["SWIFT_BACKTRACE": ""]
    /// What the runtime's backtracer prints first (`💣 Program crashed: …` or `*** Program crashed: …`).
    static let backtracerOutput = "Program crashed"

    @Test(arguments: [
        (DemoBuild.debug, "fatal-error", SIGILL, "Fatal error: ", "CrashDemo.crashFatalError"),
        (DemoBuild.debug, "force-unwrap", SIGILL, "Unexpectedly found nil", "CrashDemo.crashForceUnwrap"),
        (
            DemoBuild.release, "force-unwrap", SIGILL, "SIGILL (a failed Swift runtime check",
            "CrashDemo.crashForceUnwrap"
        ),
        (DemoBuild.release, "index-out-of-range", SIGILL, "SIGILL", "CrashDemo.crashIndexOutOfRange"),
        (DemoBuild.debug, "null-write", SIGSEGV, "SIGSEGV (bad memory access at 0x0)", "demo_null_write"),
        (DemoBuild.debug, "cxx-exception", SIGABRT, "uncaught C++ exception std::runtime_error: ", "explode"),
    ])
    func aCrashEndsWithoutTheRuntimesBacktraceAndSaysWhatCrashedInOneLine(
        build: DemoBuild, kind: String, signal: Int32, reason: String, function: String
    ) async throws {
        let run = try await runCrashDemo(
            ["crash", kind], build: build, label: "exit", environment: Self.environmentAsItIs)
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == signal, "\(run.stderr)")
        #expect(run.reportFiles.count == 1)
        #expect(!run.stderr.contains(Self.backtracerOutput), "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").filter { $0.hasPrefix("CohorlyCrash: crashed: ") }
        #expect(lines.count == 1, "\(run.stderr)")
        let line = String(lines.first ?? "")
        #expect(line.contains(reason), "\(line)")
        #expect(line.contains(" in ") && line.contains(function), "\(line)")
        #expect(line.contains("report written"), "\(line)")
        #expect(line.contains("SWIFT_BACKTRACE=enable=yes"), "\(line)")
    }

    @Test func theRuntimesBacktraceIsOneSettingAway() async throws {
        let run = try await runCrashDemo(
            ["crash", "force-unwrap"], label: "asked", environment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no"])
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGILL)
        #expect(run.reportFiles.count == 1)
        #expect(run.stderr.contains(Self.backtracerOutput), "\(run.stderr)")
        let line = try #require(run.stderr.split(separator: "\n").first { $0.hasPrefix("CohorlyCrash: crashed: ") })
        #expect(!line.contains("SWIFT_BACKTRACE"), "\(line)")  // no hint: it is on
    }

    /// The main thread sleeps in `sleep()`; a background thread crashes. The handler's capture signal interrupts
    /// the sleep (EINTR): the main thread must never run on (it would `exit(3)`), and the process dies of SIGSEGV.
    @Test func aCrashOnAnotherThreadEndsTheProcessOfItsSignalWhileMainSleeps() async throws {
        for attempt in 1...5 {
            let run = try await runCrashDemo(
                ["scenario", "sleeping-main"], label: "sleeping", environment: Self.environmentAsItIs)
            defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
            #expect(
                run.signal == SIGSEGV, "run \(attempt): exit \(run.exitStatus.map(String.init) ?? "-") \(run.stderr)")
            #expect(run.reportFiles.count == 1, "run \(attempt)")
        }
    }

    /// With the runtime's backtracer asked for (it takes long: the main thread, let go, would always win), the
    /// stopped threads still never run on: the backtracer suspends them where they are parked, and our report
    /// keeps their real stacks (the main thread in its sleep, called from `sleepingMain`).
    @Test func withTheRuntimesBacktracerTheOtherThreadsStayStopped() async throws {
        let run = try await runCrashDemo(
            ["scenario", "sleeping-main"], label: "sleeping-bt",
            environment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no,threads=yes"])
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGSEGV, "exit \(run.exitStatus.map(String.init) ?? "-") \(run.stderr)")
        #expect(run.stderr.contains(Self.backtracerOutput), "\(run.stderr)")
        #expect(run.stderr.contains("park_until_death"), "\(run.stderr)")  // suspended where we parked it
        let report = try #require(try run.reports().first)
        let main = try #require(report.threads.first { $0.name == "CrashDemo" })
        let functions = try await ReferenceSymbolizer.functions(of: main, in: report)
        #expect(functions.contains { $0.contains("sleepingMain") }, "\(functions)")
    }

    /// The names the stderr line prints, against the toolchain's demangler for every Swift function of CrashDemo:
    /// `Module.Type.name` is what the demangled name says (private discriminators, extension markers and
    /// initializer spellings aside).
    @Test func swiftNamesReadAsTheToolchainsDemanglerSays() async throws {
        let symbols = try await Self.swiftFunctionSymbols(of: DemoBuild.debug.executable)
        #expect(symbols.count > 1000)
        let demangled = try await Self.demangle(symbols)
        #expect(demangled.count == symbols.count)
        var named = 0
        var disagreeing: [String] = []
        for (symbol, full) in zip(symbols, demangled) {
            var buffer = [CChar](repeating: 0, count: 256)
            guard cly_swift_readable_name(symbol, &buffer, buffer.count) > 0 else { continue }
            named += 1
            let ours = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !Self.normalized(full).contains(ours) && !full.hasPrefix("one-time initialization")
                && !full.hasPrefix("outlined")
            {
                disagreeing.append("\(symbol): \(ours) | \(full)")
            }
        }
        #expect(named * 10 >= symbols.count * 9, "\(named) of \(symbols.count) named")
        // Protocol witnesses, operators and local types read imperfectly: a few, never a plain function.
        #expect(disagreeing.count * 100 <= named, "\(disagreeing.prefix(20).joined(separator: "\n"))")
        for symbol in ["$s9CrashDemo16crashForceUnwrapyyF", "$s9CrashDemo8ScenarioO12sleepingMains5NeverOyFZ"] {
            var buffer = [CChar](repeating: 0, count: 256)
            _ = cly_swift_readable_name(symbol, &buffer, buffer.count)
            let ours = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            #expect(
                ours == (symbol.contains("Scenario") ? "CrashDemo.Scenario.sleepingMain" : "CrashDemo.crashForceUnwrap")
            )
        }
    }

    /// The demangler's text with what our short names leave out taken away.
    static func normalized(_ text: String) -> String {
        var result = text.replacingOccurrences(of: "__allocating_init", with: "init")
        for pattern in [#"\((\w+) in _[0-9A-F]+\)"#, #"\(extension in \w+\):"#, #"\(in _[0-9A-F]+\)\."#] {
            let template = pattern.hasPrefix(#"\((\w+)"#) ? "$1" : ""
            result = result.replacingOccurrences(of: pattern, with: template, options: .regularExpression)
        }
        return result
    }

    /// The defined `$s` function symbols of `executable` (`nm`, from binutils).
    static func swiftFunctionSymbols(of executable: URL) async throws -> [String] {
        let output = try await Self.run("/usr/bin/env", ["nm", executable.path], input: nil)
        return output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[1] == "t" || fields[1] == "T", fields[2].hasPrefix("$s") else { return nil }
            return String(fields[2])
        }
    }

    /// `swift-demangle` (the toolchain's, from PATH) of each symbol, one line each.
    static func demangle(_ symbols: [String]) async throws -> [String] {
        let output = try await Self.run(
            "/usr/bin/env", ["swift-demangle"], input: symbols.joined(separator: "\n") + "\n")
        return output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    static func run(_ path: String, _ arguments: [String], input: String?) async throws -> String {
        let directory = try makeTemporaryDirectory("names")
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputURL = directory.appendingPathComponent("in")
        let outputURL = directory.appendingPathComponent("out")
        _ = FileManager.default.createFile(atPath: inputURL.path, contents: Data((input ?? "").utf8))
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = try FileHandle(forReadingFrom: inputURL)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        try await runToEnd(process)
        return (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
    }
}
