import CohorlyCrash
import Foundation
import TestWaiting
import Testing

/// The recorder's promise to every signal handler that unwinds (the crashed thread, the others answering
/// SIGSYS, live threads sampled for a hang): no allocation and no initialisation at that moment. A child runs
/// with `fixtures/alloc-guard` preloaded, which counts every malloc/mmap/pipe2 call a thread makes while
/// armed; each thread unwinds itself and walks its async callers in a SIGSYS handler with the guard armed, then
/// the crash goes through the recorder's handler (unwinds and async walks) with the crashing thread armed. Without libunwind's initialisation at install, the
/// first handler unwind maps memory and opens a pipe, and this fails.
@Suite("Signal-handler unwinds allocate nothing")
struct HandlerAllocationTests {
    /// Builds the guard library into `directory`.
    static func buildGuard(in directory: URL) async throws -> URL {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/alloc-guard/alloc_guard.c")
        let library = directory.appendingPathComponent("libclyallocguard.so")
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        compiler.arguments = ["-shared", "-fPIC", "-O1", "-o", library.path, source.path]
        try await runToEnd(compiler)
        try #require(compiler.terminationStatus == 0)
        return library
    }

    @Test(arguments: DemoBuild.allCases)
    func everyThreadUnwindsInItsHandlerAndTheCrashIsWrittenWithoutAllocating(build: DemoBuild) async throws {
        let directory = try makeTemporaryDirectory("alloc-guard-\(build)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = try await Self.buildGuard(in: directory)
        let run = try await runCrashDemo(
            ["scenario", "handler-unwinds", "--recorder-only"], build: build, label: "alloc-guard",
            environment: ["LD_PRELOAD": library.path])
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let fields = Dictionary(
            uniqueKeysWithValues: stride(from: 0, to: run.words.count - 1, by: 2).map {
                (run.words[$0], run.words[$0 + 1])
            })
        // The guard works in this process: it counted the one deliberate allocation.
        #expect(fields["guard"] == "true" && fields["self_test"] == "1", "\(run.stdout)")
        // Main, 3 parked threads, a dispatch and a concurrency worker at least; all answered, none allocated.
        let threads = Int(fields["threads"] ?? "") ?? 0
        #expect(threads >= 6 && fields["answered"] == String(threads), "\(run.stdout)")
        #expect((Int(fields["fewest_frames"] ?? "") ?? 0) >= 3, "\(run.stdout)")
        // The async walk ran in every handler too: at least the task parked inside async code has callers.
        #expect((Int(fields["chains"] ?? "") ?? 0) >= 1, "\(run.stdout)")
        #expect(fields["guard_calls"] == "0", "\(run.stderr)")
        // The crash: written by the armed thread, and the only guard line is the self-test's.
        #expect(run.signal == SIGSEGV)
        let report = try #require(try run.reports().first)
        #expect((report.crashedThread?.frames.count ?? 0) >= 3)
        #expect(report.threads.count >= 5)
        let guardLines = run.stderr.split(separator: "\n").filter { $0.hasPrefix("alloc-guard:") }
        #expect(guardLines == ["alloc-guard: malloc while armed"], "\(run.stderr)")
    }

    /// The crash handler starts the sender (cly_crash_time_sender.c) from the armed thread without allocating. (The
    /// guard sees the handler's side; the child, which shares the thread's memory until it execs, writes its guard
    /// lines to its own stderr, /dev/null from its first steps on.)
    @Test func theSenderStartedAtTheCrashIsStartedWithoutAllocating() async throws {
        let directory = try makeTemporaryDirectory("alloc-guard-sender")
        defer { removeLaunchDirectory(directory) }
        let library = try await Self.buildGuard(in: directory)
        let reports = directory.appendingPathComponent("reports")
        let run = try await runCrashDemo(
            [
                "scenario", "handler-unwinds", "--storage", directory.appendingPathComponent("storage").path,
                "--sender-timeout-ms", "1000",
            ], reportDirectory: reports, label: "alloc-guard-sender", withClient: true,
            environment: ["LD_PRELOAD": library.path, "COHORLY_HOST": "http://127.0.0.1:9"], senderAtCrash: true)
        #expect(run.signal == SIGSEGV)
        let guardLines = run.stderr.split(separator: "\n").filter { $0.hasPrefix("alloc-guard:") }
        #expect(guardLines == ["alloc-guard: malloc while armed"], "\(run.stderr)")
        // The sender did start: it queued the report (and deleted it), though nothing listens at that address.
        #expect(await eventually { run.reportFiles.isEmpty })
    }
}

extension CrashDemoRun {
    /// The words of standard output.
    fileprivate var words: [String] { stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init) }
}
