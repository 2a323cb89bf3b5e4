import CohorlyCrash
import Foundation
import TestWaiting
import Testing

@Suite("Recorder scenarios in child processes")
struct RecorderScenarioTests {
    @Test func otherThreadsAreCapturedWithNamesIncludingDispatchAndConcurrencyWorkers() async throws {
        let run = try await runCrashDemo(
            ["crash", "null-write", "--threads", "3", "--depth", "5"], label: "threads")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let report = try #require(try run.reports().first)
        // 3 parked pthreads + 1 libdispatch worker + 1 Swift concurrency worker, all parked in parkDeep.
        var parked: [CrashReport.Thread] = []
        for thread in report.threads {
            let functions = try await ReferenceSymbolizer.functions(of: thread, in: report)
            if functions.contains(where: { $0.contains("parkDeep") }) { parked.append(thread) }
        }
        #expect(parked.count == 5, "\(report.threads.map(\.name))")
        #expect(report.threadsAnswered == report.threadsRequested)
        let names = report.threads.map(\.name)
        #expect(names.contains("parked-1") && names.contains("parked-2"))
        // The first parked thread is named "\u{1}bad\xFFname": escaped and repaired, and it still parses.
        #expect(names.contains("\u{1}bad\u{FFFD}name"), "\(names)")
        for thread in parked { #expect(thread.frames.count >= 5) }
        // Every loaded object is listed, not only those the frames point into; each with its build id.
        let paths = report.modules.map(\.path)
        #expect(paths.first == report.executable)
        for library in [
            "ld-linux-x86-64.so.2", "libc.so.6", "libswiftCore.so", "libFoundation.so", "libdispatch.so",
        ] {
            #expect(paths.contains { $0.hasSuffix("/" + library) }, "\(library) missing from \(paths)")
        }
        #expect(
            report.modules.filter { !$0.path.contains("vdso") }.allSatisfy { $0.buildId.count == 40 })
        #expect(Set(paths).count == paths.count)
        #expect(report.threads.count <= 19)
        #expect(report.captureNs.map { $0 > 0 } == true)
    }

    @Test func reportDirectoryIsCreated0700AndReportsAre0600() async throws {
        let parent = try makeTemporaryDirectory("modes")
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("state/cohorly/crashes")
        let run = try await runCrashDemo(["crash", "abort"], reportDirectory: directory)
        #expect(run.signal == SIGABRT)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        let report = try #require(run.reportFiles.first)
        let reportAttributes = try FileManager.default.attributesOfItem(atPath: report.path)
        #expect((reportAttributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func twentyThreadsAtMostAndHundredFramesAtMost() async throws {
        let run = try await runCrashDemo(
            ["crash", "null-write", "--threads", "30", "--depth", "150"], label: "caps")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let report = try #require(try run.reports().first)
        #expect(report.allThreads.count == 20)
        #expect(report.allThreads.allSatisfy { $0.frames.count <= 100 })
        #expect(report.threads.contains { $0.truncated && $0.frames.count == 100 })
    }

    @Test func theSizeCapKeepsTheReportWholeAndDropsFramesFirst() async throws {
        let run = try await runCrashDemo(["scenario", "small-report"], label: "cap")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGSEGV)
        let file = try #require(run.reportFiles.first)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        #expect(size <= 8 * 1024)
        let report = try #require(try run.reports().first)
        #expect(report.complete)  // closed properly, not torn
        #expect(report.crashedThread?.frames.isEmpty == false)
        let framesKept = report.allThreads.reduce(0) { $0 + $1.frames.count }
        #expect(framesKept < 20 * 100)
        #expect(report.allThreads.contains { $0.truncated })
    }

    @Test func eightThreadsCrashingAtOnceMakeExactlyOneReport() async throws {
        for _ in 0..<3 {
            let run = try await runCrashDemo(["scenario", "concurrent"], label: "concurrent")
            defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
            #expect(run.signal == SIGSEGV)
            #expect(run.reportFiles.count == 1)
            #expect(run.tornFiles.isEmpty)
        }
    }

    @Test func contextUpdatedWhileCrashingIsConsistent() async throws {
        for _ in 0..<3 {
            let run = try await runCrashDemo(["scenario", "context-race"], label: "context")
            defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
            #expect(run.signal == SIGSEGV)
            let report = try #require(try run.reports().first)
            let properties = try #require(report.context["properties"]?.objectValue)
            let counter = try #require(properties["counter"]?.stringValue.flatMap { Int($0) })
            #expect(report.context["distinct_id"]?.stringValue == "user-\(counter)")
            #expect(properties["padding"]?.stringValue?.count == counter % 3000)
        }
    }

    @Test func forkedChildGetsItsOwnInsertId() async throws {
        let run = try await runCrashDemo(["scenario", "fork"], label: "fork")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGSEGV)
        let reports = try run.reports()
        #expect(reports.count == 2)
        #expect(Set(reports.map(\.insertId)).count == 2)
        #expect(Set(reports.map(\.pid)).count == 2)
    }

    @Test func cxxTryCatchStillWorksAfterInstall() async throws {
        let run = try await runCrashDemo(["scenario", "cxx-catch"], label: "catch")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.exitStatus == 0)
        #expect(run.stdout.contains("caught"))
        #expect(run.reportFiles.isEmpty)
    }

    @Test func libunwindIsNotBoundToCxxExceptionHandling() async throws {
        // libunwind.so.8 exports _Unwind_*; loaded privately it must not take over C++ unwinding.
        let process = Process()
        process.executableURL = DemoBuild.debug.executable
        let directory = try makeTemporaryDirectory("bindings")
        defer { try? FileManager.default.removeItem(at: directory) }
        process.arguments = ["scenario", "cxx-catch", "--recorder-only", "--report-dir", directory.path]
        process.environment = ["LD_DEBUG": "bindings", "SWIFT_BACKTRACE": "enable=no"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let output = String(decoding: try await runReadingToEnd(process, reading: errors), as: UTF8.self)
        let raise = output.split(separator: "\n").filter { $0.contains("`_Unwind_RaiseException'") }
        #expect(!raise.isEmpty)
        // "binding file A [0] to B [0]: normal symbol `_Unwind_RaiseException'": B must never be libunwind.
        let targets = raise.compactMap { line -> String? in
            guard let to = line.range(of: " to ") else { return nil }
            return line[to.upperBound...].split(separator: " ").first.map(String.init)
        }
        #expect(targets.count == raise.count)
        #expect(targets.allSatisfy { !$0.contains("libunwind") }, "\(raise)")
        #expect(output.contains("libunwind.so.8"))  // it is loaded, privately
    }

    @Test func aFaultInsideTheHandlerMarksTheFileAndTheProcessStillDiesOfTheOriginalSignal()
        async throws
    {
        let run = try await runCrashDemo(["scenario", "handler-fault"], label: "recrash")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGILL)  // the original crash, not the fault in the writer
        #expect(run.reportFiles.isEmpty)
        #expect(run.tornFiles.count == 1)
        // The next launch salvages the torn file: header kept, recrash recorded, marked incomplete.
        let report = try #require(try run.reports().first)
        #expect(report.recrashSignal == SIGSEGV)
        #expect(!report.complete)
        #expect(report.mechanism == .swiftFatal)
        #expect(report.message?.contains("demo fatal") == true)
    }

    @Test func aThreadThatBlocksEverySignalIsListedWithoutFrames() async throws {
        let run = try await runCrashDemo(["scenario", "blocked-thread"], label: "blocked")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGSEGV)
        let report = try #require(try run.reports().first)
        let blocked = try #require(report.threads.first { $0.name == "blocked" })
        #expect(blocked.frames.isEmpty)
        #expect(report.threadsAnswered == report.threadsRequested)
    }

    @Test func installingTwiceIsHarmless() async throws {
        let run = try await runCrashDemo(["scenario", "install-twice"], label: "twice")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.stdout.contains("installed twice"))
        #expect(run.signal == SIGSEGV)
        #expect(run.reportFiles.count == 1)
    }

    @Test func crashInLibraryLoadedAfterInstallNamesThatLibrary() async throws {
        let directory = try makeTemporaryDirectory("dlopen")
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("fixture.c")
        let library = directory.appendingPathComponent("libclyfixture.so")
        try """
        __attribute__((noinline)) void cly_fixture_crash(void) { *(volatile int *)0 = 1; }
        """.write(to: source, atomically: true, encoding: .utf8)
        let compiler = Process()  // a library that is not loaded at install time
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        compiler.arguments = [
            "-shared", "-fPIC", "-O1", "-g", "-Wl,--build-id", "-o", library.path, source.path,
        ]
        try await runToEnd(compiler)
        try #require(compiler.terminationStatus == 0)
        let run = try await runCrashDemo(
            ["scenario", "dlopen-crash", "--library", library.path], label: "dlopen")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGSEGV)
        let report = try #require(try run.reports().first)
        let frame0 = try #require(report.crashedThread?.frames.first)
        let module = try #require(report.module(containing: frame0))
        #expect(module.path == library.path)
        #expect(module.buildId.count == 40)
        let functions = try await ReferenceSymbolizer.functions(
            of: try #require(report.crashedThread), in: report)
        #expect(functions.first == "cly_fixture_crash")
    }

    @Test func fifteenCrashesKeepTheNewestTen() async throws {
        let directory = try makeTemporaryDirectory("fifteen")
        defer { try? FileManager.default.removeItem(at: directory) }
        var insertIds: [String] = []
        for _ in 0..<15 {
            let run = try await runCrashDemo(["crash", "abort"], reportDirectory: directory)
            #expect(run.signal == SIGABRT)
            let newest = try #require(run.reportFiles.last)
            insertIds.append(try CrashReport.decode(Data(contentsOf: newest)).insertId)
        }
        let reports = CrashReportStore(directory: directory).pendingReports()
        #expect(reports.count == 10)
        let kept = try reports.map { try CrashReportStore(directory: directory).load($0).insertId }
        #expect(kept == Array(insertIds.suffix(10)))
    }

    @Test func chainingRunsTheSwiftBacktracerAndKeepsTheExitStatus() async throws {
        for (kind, signal) in [("fatal-error", SIGILL), ("null-write", SIGSEGV), ("sigtrap", SIGTRAP)] {
            let run = try await runCrashDemo(["crash", kind], backtracer: true, label: "chain")
            defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
            #expect(run.signal == signal, "\(kind)")
            #expect(run.reportFiles.count == 1, "\(kind)")
            #expect(run.stderr.contains("Program crashed"), "\(kind): \(run.stderr)")
        }
    }

    @Test func withoutChainingTheBacktracerDoesNotRunAndTheExitStatusIsKept() async throws {
        let run = try await runCrashDemo(
            ["crash", "null-write", "--no-chain"], backtracer: true, label: "nochain")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.signal == SIGSEGV)
        #expect(run.reportFiles.count == 1)
        #expect(!run.stderr.contains("Program crashed"))
    }
}

@Suite("Install errors (in process: nothing is installed)")
struct InstallErrorTests {
    @Test func unusableDirectoryThrowsANamedErrorAndInstallsNothing() throws {
        let directory = URL(fileURLWithPath: "/proc/self/cohorly-cannot-exist")
        // The process is left as it was: every crash signal keeps the action it had before.
        let signals = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT]
        func actions() -> [UnsafeMutableRawPointer?] {
            signals.map { signal in
                var action = sigaction()
                sigaction(signal, nil, &action)
                return unsafeBitCast(action.__sigaction_handler, to: UnsafeMutableRawPointer?.self)
            }
        }
        let before = actions()
        #expect(throws: CrashRecorder.InstallError.self) {
            try CrashRecorder.install(.init(reportDirectory: directory))
        }
        do {
            try CrashRecorder.install(.init(reportDirectory: directory))
        } catch {
            #expect("\(error)".contains(directory.path))
        }
        #expect(!CrashRecorder.isInstalled)
        #expect(actions() == before)
        #expect(CrashRecorder.options == nil)
    }

    @Test func defaultDirectoryFollowsXDGStateHome() {
        let xdg = CrashRecorder.Options.defaultReportDirectory(environment: [
            "XDG_STATE_HOME": "/x/state", "HOME": "/h",
        ])
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        #expect(xdg.path == "/x/state/cohorly/crashes/" + URL(fileURLWithPath: executable).lastPathComponent)
        let home = CrashRecorder.Options.defaultReportDirectory(environment: ["HOME": "/h"], executableName: "MyApp")
        #expect(home.path == "/h/.local/state/cohorly/crashes/MyApp")
    }

    /// Two apps of one user never share a report directory (one would send the other's crashes and abnormal
    /// exits under its own project); a name is one safe path component.
    @Test func eachAppHasItsOwnDefaultReportDirectory() {
        let environment = ["HOME": "/h"]
        let first = CrashRecorder.Options.defaultReportDirectory(environment: environment, executableName: "api")
        let second = CrashRecorder.Options.defaultReportDirectory(environment: environment, executableName: "worker")
        #expect(first != second)
        for (name, expected) in [
            ("../x", ".._x"), ("..", "app"), ("", "app"), ("a b/é", "a_b___"), ("ok-1.2_3", "ok-1.2_3"),
        ] {
            let directory = CrashRecorder.Options.defaultReportDirectory(environment: environment, executableName: name)
            #expect(directory.path == "/h/.local/state/cohorly/crashes/" + expected, "\(name)")
        }
    }
}
