import CohorlyCrash
import Foundation
import Testing

/// One async crash kind of CrashDemo and what its report must show.
struct AsyncCrashExpectation: Sendable, CustomStringConvertible {
    var kind: String
    /// The crashing async function: a physical frame at or above the anchor.
    var function: String
    /// The functions that awaited it, innermost first: the chain's frames, in this order.
    var callers: [String]

    var description: String { kind }

    static let all: [AsyncCrashExpectation] = [
        .init(
            kind: "async-actor", function: "discountPercent",
            callers: ["price", "checkout", "handleRequest", "startCheckoutTask"]),
        .init(kind: "async-sleep", function: "sleepLevel3", callers: ["sleepLevel2", "sleepLevel1", "startSleepTask"]),
        .init(kind: "async-task-group", function: "groupChild", callers: ["startGroupTask"]),
    ]
}

/// The recorder's async walk (cly_async.c) in real crashing children: the chain of awaiting functions, in
/// order, in debug, release and release without frame pointers; none for idle threads; a clean stop on a
/// corrupt context; the same walk in live captures. The reports are format v2.
@Suite("Async callers in crash reports and live captures")
struct AsyncStackTests {
    @Test(arguments: AsyncBuild.allCases)
    func theAwaitingFunctionsAppearInOrder(build: AsyncBuild) async throws {
        try await withThrowingTaskGroup(of: String.self) { group in
            for expectation in AsyncCrashExpectation.all {
                group.addTask { try await Self.check(expectation, build: build) }
            }
            for try await line in group { print(line) }
        }
    }

    /// Crashes one kind (the Swift backtracer on, as the reference) and checks the report; returns the line
    /// comparing it with the backtracer.
    static func check(_ expectation: AsyncCrashExpectation, build: AsyncBuild) async throws -> String {
        let run = try await runCrashDemo(
            ["crash", expectation.kind], executable: build.executable, backtracer: true,
            label: "\(expectation.kind)-\(build)")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let context = "\(expectation.kind) (\(build))"
        #expect(run.signal == SIGILL, "\(context): \(run.stderr)")
        let file = try #require(run.reportFiles.first, "\(context): no report")
        let report = try AsyncReport(file: file)
        #expect(report.format == "cohorly-crash/2")
        let thread = report.crashed
        #expect(thread.frames.first?.kind == "pc")
        #expect(thread.frames.dropFirst().allSatisfy { $0.kind == "return_address" }, "\(context)")
        let chain = try #require(thread.async, "\(context): no async chain")
        #expect(chain.stop == "task_root", "\(context)")
        #expect(chain.frames.allSatisfy { $0.kind == "async_resume" })
        #expect(chain.anchor >= 0 && chain.anchor < thread.frames.count, "\(context)")
        let physical = try await report.functions(Array(thread.frames.prefix(chain.anchor + 1)))
        #expect(physical.contains { $0.contains(expectation.function) }, "\(context): \(physical)")
        let callers = try await report.functions(chain.frames)
        #expect(appearInOrder(expectation.callers, in: callers), "\(context): \(callers)")
        let reference = backtracerAsyncFrames(run.stderr)
        let same = !reference.isEmpty && appearInOrder(expectation.callers, in: reference)
        return "async \(context): recorder chain \(callers.count) frames, callers in order;"
            + " Swift backtracer: \(same ? "the same callers" : "\(reference.count) async frames, callers missing")"
    }

    @Test func aThreadIdleOnAnExecutorGetsNoChain() async throws {
        let run = try await runCrashDemo(["scenario", "async-idle"], label: "async-idle")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGSEGV)
        let file = try #require(run.reportFiles.first, "\(run.stderr)")
        let report = try AsyncReport(file: file)
        // The cooperative pool's threads ran the finished tasks; a thread running no job (no swift_job_run on
        // its stack) is idle, whatever its registers still hold, and must get no chain. A thread still
        // finishing the last task (a loaded machine) runs a job: its chain, if any, is real and reaches the root.
        var idle = 0
        for thread in report.others {
            let functions = try await report.functions(thread.frames)
            if functions.contains(where: { $0.contains("swift_job_run") }) {
                if let chain = thread.async { #expect(chain.stop == "task_root", "thread \(thread.tid)") }
            } else {
                idle += 1
                #expect(thread.async == nil, "idle thread \(thread.tid) \(thread.name) got a chain: \(functions)")
            }
        }
        #expect(idle >= 1, "\(report.others.map(\.name))")
        // The main thread runs the async top-level code: its chain (if any) is the real one, to the task root.
        if let chain = report.crashed.async { #expect(chain.stop == "task_root") }
    }

    @Test(arguments: ["fault", "validation", "loop"])
    func aCorruptContextStopsTheWalkAndKeepsThePhysicalStack(mode: String) async throws {
        let run = try await runCrashDemo(
            ["crash", "async-actor", "--corrupt-async", mode], label: "async-corrupt-\(mode)")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGILL)
        let file = try #require(run.reportFiles.first, "\(run.stderr)")
        let report = try AsyncReport(file: file)
        let chain = try #require(report.crashed.async)
        #expect(chain.stop == mode)
        // Fault and validation: the first entry only. Loop: the corrupt context's own entry, then the repeat.
        #expect(chain.frames.count == (mode == "loop" ? 2 : 1))
        #expect(try await report.functions(chain.frames).first?.contains("price") == true)
        let physical = try await report.functions(report.crashed.frames)
        #expect(
            physical.contains { $0.contains("discountPercent") } && physical.contains { $0.contains("swift_job_run") })
    }

    @Test func thePipeFallbackReadsTheSameChain() async throws {
        // Where process_vm_readv is refused (seccomp), the walk writes the words into a pipe and reads them back.
        let run = try await runCrashDemo(["crash", "async-actor", "--async-read-pipe"], label: "async-pipe")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGILL)
        let file = try #require(run.reportFiles.first, "\(run.stderr)")
        let report = try AsyncReport(file: file)
        let chain = try #require(report.crashed.async)
        #expect(chain.stop == "task_root")
        let callers = try await report.functions(chain.frames)
        #expect(appearInOrder(AsyncCrashExpectation.all[0].callers, in: callers), "\(callers)")
    }

    @Test func liveCapturesOfTheCallerAndOfAHungActorNameTheAwaitingFunctions() async throws {
        let run = try await runCrashDemo(["scenario", "async-capture"], label: "async-capture")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.exitStatus == 0, "\(run.stderr)")
        let captures = Self.captures(run.stdout)
        // captureError's path: the calling thread, three awaits deep; its frames are all return addresses.
        let own = try #require(captures["self"], "\(run.stdout)")
        #expect(own.stop == "task_root" && own.frames.allSatisfy { $0.kind == "return_address" })
        let ownFrames = try await symbolize(own.frames.map { $0.line })
        #expect(ownFrames.prefix(own.anchor + 1).contains { $0.contains("captureInner") }, "\(ownFrames)")
        let ownCallers = try await symbolize(own.async.map { $0.line })
        #expect(appearInOrder(["captureMiddle", "captureOuter", "AsyncCaptures"], in: ownCallers), "\(ownCallers)")
        // The hang watchdog's path: a thread blocked in an actor method, captured from another thread.
        let hung = try #require(captures["live"], "\(run.stdout)")
        #expect(hung.stop == "task_root" && hung.frames.first?.kind == "pc")
        let hungFrames = try await symbolize(hung.frames.map { $0.line })
        #expect(hungFrames.prefix(hung.anchor + 1).contains { $0.contains("blockForever") }, "\(hungFrames)")
        let hungCallers = try await symbolize(hung.async.map { $0.line })
        #expect(appearInOrder(["stuckHandler", "AsyncCaptures"], in: hungCallers), "\(hungCallers)")
    }

    /// One capture printed by scenario async-capture.
    struct PrintedCapture {
        struct Location {
            var kind: String
            var path: String
            var offset: UInt64
            /// The symbolizer's input: return addresses at offset − 1.
            var line: String {
                "\"\(path)\" 0x\(String(offset - (kind == "return_address" ? 1 : 0), radix: 16))"
            }
        }
        var anchor = 0
        var stop = ""
        var frames: [Location] = []
        var async: [Location] = []
    }

    static func captures(_ stdout: String) -> [String: PrintedCapture] {
        var captures: [String: PrintedCapture] = [:]
        for line in stdout.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 4 else { continue }
            let offset = { (text: String) in UInt64(text.dropFirst(2), radix: 16) ?? 0 }
            switch words[0] {
            case "capture" where words.count >= 6:
                captures[words[1], default: .init()].anchor = Int(words[3]) ?? -1
                captures[words[1], default: .init()].stop = words[5]
            case "frame" where words.count >= 5:
                captures[words[1], default: .init()].frames.append(
                    .init(kind: words[2], path: words[3], offset: offset(words[4])))
            case "async":
                captures[words[1], default: .init()].async.append(
                    .init(kind: "async_resume", path: words[2], offset: offset(words[3])))
            default: continue
            }
        }
        return captures
    }
}
