import CohorlyCrash
import CrashDemoSupport
import Foundation

// CrashDemo: crashes on demand, in every supported way.
//
//   CrashDemo list
//   CrashDemo crash <kind> [--on main|thread|dispatch|task] [options]
//   CrashDemo scenario <name> [options]      (test scenarios: see Scenario.swift)
//   CrashDemo reports [--report-dir DIR]     (the reports waiting to be sent)
//
// Options: --report-dir DIR   where reports go (default: the recorder's default, or $COHORLY_CRASH_DIR)
//          --no-chain         do not call the Swift backtracer after the report
//          --threads N        park N extra named threads (each --depth frames deep) before crashing
//          --depth D          frames deep for the parked threads (default 3)
//          --library PATH     a shared library with `cly_fixture_crash` (scenario dlopen-crash)

struct DemoOptions {
    var command = ""
    var word = ""
    var place = "main"
    var reportDirectory: String?
    var chain = true
    var parkedThreads = 0
    var parkDepth = 3
    var library: String?

    static func parse(_ arguments: [String]) -> DemoOptions {
        var options = DemoOptions()
        var positional: [String] = []
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--on": options.place = iterator.next() ?? ""
            case "--report-dir": options.reportDirectory = iterator.next()
            case "--no-chain": options.chain = false
            case "--threads": options.parkedThreads = Int(iterator.next() ?? "") ?? 0
            case "--depth": options.parkDepth = Int(iterator.next() ?? "") ?? 3
            case "--library": options.library = iterator.next()
            default:
                if argument.hasPrefix("--") { usage("unknown option \(argument)") }
                positional.append(argument)
            }
        }
        options.command = positional.first ?? ""
        options.word = positional.dropFirst().first ?? ""
        return options
    }
}

func usage(_ problem: String) -> Never {
    FileHandle.standardError.write(
        Data(
            "CrashDemo: \(problem)\nusage: CrashDemo list | crash <kind> [--on main|thread|dispatch|task] | scenario <name> | reports\n"
                .utf8))
    exit(2)
}

let options = DemoOptions.parse(Array(CommandLine.arguments.dropFirst()))

func installRecorder() {
    let directory =
        options.reportDirectory ?? ProcessInfo.processInfo.environment["COHORLY_CRASH_DIR"]
    do {
        try CrashRecorder.install(
            .init(
                reportDirectory: directory.map { URL(fileURLWithPath: $0) },
                chainToPreviousHandlers: options.chain,
                context: CrashContext(release: "CrashDemo@1.0.0", distinctId: "demo-user")))
    } catch {
        FileHandle.standardError.write(Data("CrashDemo: \(error)\n".utf8))
        exit(1)
    }
}

var scratchDirectory: String {
    options.reportDirectory ?? NSTemporaryDirectory()
}

switch options.command {
case "list":
    for kind in CrashKind.allCases {
        print("\(kind.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)) \(kind.summary)")
    }
case "crash":
    guard let kind = CrashKind(rawValue: options.word) else {
        usage("unknown crash kind '\(options.word)' (see CrashDemo list)")
    }
    installRecorder()
    Workers.park(count: options.parkedThreads, depth: options.parkDepth)
    let scratch = scratchDirectory
    crash(on: options.place) { kind.crash(scratchDirectory: scratch) }
case "reports":
    // Lists the reports waiting in the report directory (what the next launch would send).
    let directory =
        options.reportDirectory.map { URL(fileURLWithPath: $0) }
        ?? CrashRecorder.Options().reportDirectory
    let store = CrashReportStore(directory: directory)
    for file in store.pendingReports() {
        do {
            let report = try store.load(file)
            let reason =
                report.message ?? report.cxx.map { "\($0.type): \($0.what)" } ?? report.signal.name
            let frames = report.crashedThread?.frames.count ?? 0
            print(
                "\(file.url.path)\n  \(report.signal.name) (\(report.mechanism.rawValue)) \(reason.trimmingCharacters(in: .whitespacesAndNewlines))"
            )
            print(
                "  \(frames) frames on the crashed thread, \(report.threads.count) other threads, \(report.modules.count) modules, captured in \(Double(report.captureNs ?? 0) / 1e6) ms"
            )
        } catch {
            print("\(error)")
        }
    }
case "scenario" where options.word == "install-cost":
    // Prints what install costs: wall time and resident memory added (benchmarks read this line).
    // Foundation is warmed first (URL, paths), as in any app that has started: its one-time start-up is
    // not the recorder's cost.
    _ = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("warm").path
    let residentBefore = residentBytes()
    let start = DispatchTime.now().uptimeNanoseconds
    installRecorder()
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    let residentAfter = residentBytes()
    print("install_ns \(elapsed) resident_added_bytes \(residentAfter - residentBefore)")
case "scenario":
    installRecorder()
    Scenario.run(options.word, options: options)
default:
    usage(options.command.isEmpty ? "missing command" : "unknown command '\(options.command)'")
}

/// Resident set size from /proc/self/statm.
func residentBytes() -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = text.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
