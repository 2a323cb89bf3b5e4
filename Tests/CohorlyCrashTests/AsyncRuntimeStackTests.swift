import Foundation
import Testing

/// A crash whose awaiting chain runs through one of the concurrency runtime's constructs (CrashDemo's
/// AsyncRuntimeCrashes.swift), and the chain a debug build's report must show.
struct RuntimeConstructCrash: Sendable, CustomStringConvertible {
    var kind: String
    /// The crashing function: a physical frame at or above the anchor.
    var function: String
    /// The awaiting functions, innermost first (each a substring of a linkage name; a closure's names its
    /// enclosing function; `AsyncRuntime` is the task's closure in `AsyncRuntimeCrash.run`, mangled with a
    /// substitution for `Crash`): in a debug build, all of them, in this order.
    var callers: [String]

    var description: String { kind }

    static let all: [RuntimeConstructCrash] = [
        .init(
            kind: "async-task-local", function: "localStore",
            callers: ["localService", "localMiddleware", "localMiddleware", "localRoute", "AsyncRuntime"]),
        .init(
            kind: "async-cancellation-handler", function: "cancelStore",
            callers: ["cancelService", "cancelMiddleware", "cancelMiddleware", "cancelRoute", "AsyncRuntime"]),
        .init(kind: "async-group-child", function: "groupStore", callers: ["groupService", "groupMiddleware"]),
        .init(
            kind: "async-continuation", function: "continuationStore",
            callers: ["continuationService", "continuationRoute", "AsyncRuntime"]),
        .init(kind: "async-let", function: "letStore", callers: ["letService", "letMiddleware"]),
    ]
}

/// The async walk through the concurrency runtime's own resume points, several of which have no unwind info
/// (cly_resume_points.c): for a crash several awaits deep, after a `Task.sleep` (the physical stack starts at the
/// executor), through a task-local value (what `withSpan`, `ServiceContext.withValue` and a task-local logger
/// await through), a cancellation handler, a task-group child, a continuation resumed from another thread and an
/// `async let`. The reference is the Swift runtime's backtracer, run on the same crash (the recorder chains to
/// it): every app function among its `[async]` frames must be in our report, in its order; a debug report must
/// also hold every awaiting function.
@Suite("Async callers through the concurrency runtime")
struct AsyncRuntimeStackTests {
    @Test(arguments: [AsyncBuild.debug, .release])
    func theChainGoesOnThroughTheRuntimeAsFarAsTheBacktracersDoes(build: AsyncBuild) async throws {
        try await withThrowingTaskGroup(of: String.self) { group in
            for crash in RuntimeConstructCrash.all {
                group.addTask { try await Self.check(crash, build: build) }
            }
            for try await line in group { print(line) }
        }
    }

    /// The table the walk consults is exactly what the toolchain's own tools say: in every library it holds
    /// entries for, the function symbols named as Swift resume funclets (`llvm-nm`) that no FDE starts at
    /// (`llvm-objdump --dwarf=frames`), no more, no less — among them the two the concurrency runtime's task-local
    /// and cancellation-handler chains go through.
    @Test func theWalkKnowsExactlyTheResumeFuncletsWithoutUnwindInfo() async throws {
        let run = try await runCrashDemo(["scenario", "resume-points"], label: "resume-points")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.exitStatus == 0, "\(run.stderr)")
        var recognised: [String: Set<UInt64>] = [:]
        for line in run.stdout.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard words.count == 3, words[0] == "point", let offset = UInt64(words[2].dropFirst(2), radix: 16) else {
                continue
            }
            recognised[words[1], default: []].insert(offset)
        }
        let runtime = try #require(
            recognised.keys.first { $0.hasSuffix("/libswift_Concurrency.so") }, "\(run.stdout.prefix(2000))")
        for (path, offsets) in recognised {
            let expected = try await Self.resumeFuncletsWithoutFDE(path)
            #expect(offsets == Set(expected.keys), "\(path): \(offsets.count) recognised, \(expected.count) expected")
            if path == runtime {
                let names = offsets.compactMap { expected[$0] }
                #expect(names.contains { $0.contains("TaskLocalC13withValueImpl") && $0.hasSuffix("TQ1_") })
                #expect(names.contains { $0.contains("withTaskCancellationHandler") && $0.hasSuffix("TQ1_") })
            }
        }
    }

    /// The oracle: offset -> name of every resume funclet (`$s…TQ<n>_` / `$s…TY<n>_` function symbol) of the object
    /// at `path` that no FDE starts at, by the toolchain's llvm-nm and llvm-objdump.
    static func resumeFuncletsWithoutFDE(_ path: String) async throws -> [UInt64: String] {
        let tools = ReferenceSymbolizer.executable.deletingLastPathComponent()
        let frames = try await SymbolicatedCrashTests.tool(
            tools.appendingPathComponent("llvm-objdump").path, ["--dwarf=frames", path])
        var starts = Set<UInt64>()
        for line in frames.output.split(separator: "\n") where line.contains(" FDE ") {
            guard let range = line.range(of: "pc=") else { continue }
            let start = line[range.upperBound...].prefix { $0 != "." }
            if let value = UInt64(start, radix: 16) { starts.insert(value) }
        }
        let symbols = try await SymbolicatedCrashTests.tool(
            tools.appendingPathComponent("llvm-nm").path, ["--defined-only", path])
        var funclets: [UInt64: String] = [:]
        for line in symbols.output.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard words.count == 3, words[1] == "t" || words[1] == "T", let address = UInt64(words[0], radix: 16),
                words[2].hasPrefix("$s"), words[2].range(of: #"T[QY][0-9]*_$"#, options: .regularExpression) != nil,
                !starts.contains(address)
            else { continue }
            funclets[address] = words[2]
        }
        return funclets
    }

    /// Crashes one kind and compares its report with the backtracer's output; returns a line saying how they
    /// compare.
    static func check(_ crash: RuntimeConstructCrash, build: AsyncBuild) async throws -> String {
        let run = try await runCrashDemo(
            ["crash", crash.kind], executable: build.executable, backtracer: true, label: "\(crash.kind)-\(build)")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let context = "\(crash.kind) (\(build))"
        #expect(run.signal == SIGILL, "\(context): \(run.stderr)")
        let file = try #require(run.reportFiles.first, "\(context): no report")
        let report = try AsyncReport(file: file)
        let thread = report.crashed
        let chain = try #require(thread.async, "\(context): no async chain")
        #expect(chain.stop == "task_root", "\(context)")
        let physical = try await report.functions(Array(thread.frames.prefix(chain.anchor + 1)))
        #expect(physical.contains { $0.contains(crash.function) }, "\(context): \(physical)")
        let callers = try await report.functions(chain.frames)
        if build == .debug {
            #expect(appearInOrder(crash.callers, in: callers), "\(context): \(callers)")
        }
        // The backtracer's app frames of the awaiting chain, against ours (the crashing frames and the chain),
        // both in the backtracer's naming (`swift-demangle --simplified`, without the funclet's prefix).
        let reference = backtracerAsyncAppFunctions(run.stderr, image: build.executable.lastPathComponent)
        #expect(reference.count >= 2, "\(context): the backtracer's async frames: \(run.stderr)")
        let ours = try await StackTruthTests.demangled(physical + callers, "--simplified").map(withoutFuncletPrefix)
        #expect(appearInOrder(reference, exactlyIn: ours), "\(context): backtracer \(reference), ours \(ours)")
        return "async \(context): \(callers.count) async frames; the backtracer's \(reference.count) app frames"
            + " \(appearInOrder(reference, exactlyIn: ours) ? "all in ours" : "NOT all in ours")"
    }
}

/// The function names of the `[async]` frames in the Swift runtime's backtracer output (its stderr) for the
/// crashed thread whose image is `image`, innermost first, without a resume funclet's prefix. A line reads
/// `N [async] [thunk]  0xADDRESS FUNCTION in IMAGE at FILE:LINE` (tags after `[async]` as they apply).
func backtracerAsyncAppFunctions(_ stderr: String, image: String) -> [String] {
    backtracerAsyncFrames(stderr).compactMap { line in
        guard let address = line.range(of: #"\[async\]( \[[a-z]+\])* +0x[0-9a-f]+ "#, options: .regularExpression),
            let imageRange = line.range(of: " in \(image)", options: .backwards),
            address.upperBound <= imageRange.lowerBound
        else { return nil }
        let after = line[imageRange.upperBound...]
        guard after.isEmpty || after.hasPrefix(" at ") else { return nil }
        return withoutFuncletPrefix(String(line[address.upperBound..<imageRange.lowerBound]))
    }
}

/// A demangled name without the `(N) await resume partial function for ` / `(N) suspend resume partial function
/// for ` a resume funclet's name starts with.
func withoutFuncletPrefix(_ name: String) -> String {
    guard
        let range = name.range(
            of: #"^\(\d+\) (await|suspend) resume partial function for "#, options: .regularExpression)
    else { return name }
    return String(name[range.upperBound...])
}

/// Whether every name of `expected` equals a name of `names`, in this order.
func appearInOrder(_ expected: [String], exactlyIn names: [String]) -> Bool {
    var rest = names[...]
    for name in expected {
        guard let index = rest.firstIndex(of: name) else { return false }
        rest = rest[(index + 1)...]
    }
    return true
}
