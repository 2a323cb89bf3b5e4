import CCrashRecorder
import Cohorly
import CohorlyCrash
import CrashDemoSupport
import Foundation

// CrashDemo: crashes on demand, in every supported way. Commands and options: Help.swift (`CrashDemo --help`).

struct DemoOptions {
    var command = ""
    var word = ""
    var place = "main"
    var reportDirectory: String?
    var chain = true
    var parkedThreads = 0
    var parkDepth = 3
    var library: String?
    var storage: String?
    var identify: String?
    var register: [String: String] = [:]
    var crashedOnly = false
    var crashAfterMilliseconds = 0
    var recorderOnly = false
    var optOut = false
    var version = "1.0.0"
    var senderTimeoutMilliseconds = 120_000
    var symbolicationBudgetMilliseconds: Int?
    var senderAtCrash = true
    var senderExecutable: String?
    var memorySampleMilliseconds = 10_000
    var abnormalExits = true
    var until: String?
    var hangThresholdMilliseconds: Int?
    var hangMilliseconds = 3000
    var hangOngoingReportMilliseconds: Int?
    var maxBreadcrumbs = 50
    var breadcrumb: String?
    var tracks = 60
    var corruptAsync: String?
    var asyncWalk = true
    var asyncReadPipe = false
    var appSigterm: String?
    var printFaultTime = false
    var dist: String?

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
            case "--storage": options.storage = iterator.next()
            case "--identify": options.identify = iterator.next()
            case "--register":
                let pair = (iterator.next() ?? "").split(separator: "=", maxSplits: 1).map(String.init)
                if pair.count == 2 { options.register[pair[0]] = pair[1] }
            case "--crash-after-ms": options.crashAfterMilliseconds = Int(iterator.next() ?? "") ?? 0
            case "--recorder-only": options.recorderOnly = true
            case "--opt-out": options.optOut = true
            case "--crashed-only": options.crashedOnly = true
            case "--breadcrumb": options.breadcrumb = iterator.next()
            case "--max-breadcrumbs": options.maxBreadcrumbs = Int(iterator.next() ?? "") ?? 50
            case "--tracks": options.tracks = Int(iterator.next() ?? "") ?? 60
            case "--corrupt-async": options.corruptAsync = iterator.next()
            case "--no-async-walk": options.asyncWalk = false
            case "--async-read-pipe": options.asyncReadPipe = true
            case "--version": options.version = iterator.next() ?? ""
            case "--sender-timeout-ms": options.senderTimeoutMilliseconds = Int(iterator.next() ?? "") ?? 120_000
            case "--no-sender-at-crash": options.senderAtCrash = false
            case "--symbolication-budget-ms": options.symbolicationBudgetMilliseconds = Int(iterator.next() ?? "")
            case "--sender-executable": options.senderExecutable = iterator.next()
            case "--memory-sample-ms": options.memorySampleMilliseconds = Int(iterator.next() ?? "") ?? 10_000
            case "--until": options.until = iterator.next()
            case "--hang-threshold-ms": options.hangThresholdMilliseconds = Int(iterator.next() ?? "")
            case "--hang-ms": options.hangMilliseconds = Int(iterator.next() ?? "") ?? 3000
            case "--hang-report-after-ms": options.hangOngoingReportMilliseconds = Int(iterator.next() ?? "")
            case "--no-abnormal-exits": options.abnormalExits = false
            case "--app-sigterm": options.appSigterm = iterator.next()
            case "--print-fault-time": options.printFaultTime = true
            case "--dist": options.dist = iterator.next()
            case "-h", "--help":
                print(helpText)
                exit(0)
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
            "CrashDemo: \(problem)\nusage: CrashDemo list | crash <kind> [--on main|thread|dispatch|task] | scenario <name> | reports | run (see CrashDemo --help)\n"
                .utf8))
    exit(2)
}

let options = DemoOptions.parse(Array(CommandLine.arguments.dropFirst()))

/// Installs crash reporting: the recorder alone with `--recorder-only`, else the Cohorly client plus
/// CohorlyCrash (which also sends the reports of earlier launches). Returns the delivery of those reports.
@discardableResult
func installRecorder() -> CohorlyCrash.Delivery? {
    let environment = ProcessInfo.processInfo.environment
    let directory = (options.reportDirectory ?? environment["COHORLY_CRASH_DIR"]).map { URL(fileURLWithPath: $0) }
    do {
        if options.recorderOnly {
            try CrashRecorder.install(recorderOptions())
            return nil
        }
        let host = environment["COHORLY_HOST"] ?? "http://127.0.0.1:4000"
        let token = environment["COHORLY_TOKEN"] ?? "demo-token"
        let storage = (options.storage ?? environment["COHORLY_STORAGE"]).map { URL(fileURLWithPath: $0) }
        let cohorly: Cohorly
        if environment["COHORLY_DESTINATION"] == "posthog" {
            // PostHog capture V1 (the host may be PostHog or `cohorly serve`, which speaks it too).
            cohorly = Cohorly.initialize(
                posthog: try PostHogConfiguration(host: host, apiKey: token), storageDirectory: storage)
        } else if environment["COHORLY_DESTINATION"] == "sentry" {
            // Sentry envelopes to the DSN (COHORLY_SENTRY_DSN), release health included: the sessions count for
            // the release the crashes carry.
            var sentry = try SentryConfiguration(dsn: environment["COHORLY_SENTRY_DSN"] ?? "")
            sentry.release = CohorlyCrash.defaultRelease(version: options.version)
            cohorly = Cohorly.initialize(sentry: sentry, storageDirectory: storage)
        } else {
            cohorly = Cohorly.initialize(
                apiHost: URL(string: host) ?? URL(fileURLWithPath: "/"), token: token, storageDirectory: storage)
        }
        if let user = options.identify { cohorly.identify(user) }
        if !options.register.isEmpty { cohorly.register(options.register.mapValues(CohorlyValue.string)) }
        if options.optOut { cohorly.optOut() }
        var crashOptions = CohorlyCrash.Options(
            reportDirectory: directory, chainToPreviousHandlers: options.chain,
            senderTimeout: .milliseconds(options.senderTimeoutMilliseconds),
            hangThreshold: options.hangThresholdMilliseconds.map { .milliseconds($0) })
        crashOptions.maxBreadcrumbs = options.maxBreadcrumbs
        if let budget = options.symbolicationBudgetMilliseconds {
            crashOptions.events.symbolicationBudget = .milliseconds(budget)
        }
        crashOptions.startSenderAtCrash = options.senderAtCrash
        if let executable = options.senderExecutable { crashOptions.senderExecutable = executable }
        crashOptions.abnormalExits = .init(
            enabled: options.abnormalExits, memorySampleInterval: .milliseconds(options.memorySampleMilliseconds))
        if let after = options.hangOngoingReportMilliseconds {
            crashOptions.hangOngoingReportAfter = .milliseconds(after)
        }
        if options.command == "throw-site" && options.word == "off" { crashOptions.handledErrors.throwSites = false }
        let delivery = try CohorlyCrash.install(
            cohorly: cohorly, dist: options.dist, version: options.version, options: crashOptions)
        if let breadcrumb = options.breadcrumb { cohorly.addBreadcrumb(breadcrumb) }
        return delivery
    } catch {
        FileHandle.standardError.write(Data("CrashDemo: \(error)\n".utf8))
        exit(1)
    }
}

/// The options of `--recorder-only`.
func recorderOptions() -> CrashRecorder.Options {
    let directory = options.reportDirectory ?? ProcessInfo.processInfo.environment["COHORLY_CRASH_DIR"]
    return CrashRecorder.Options(
        reportDirectory: directory.map { URL(fileURLWithPath: $0) }, chainToPreviousHandlers: options.chain,
        context: CrashContext(release: "CrashDemo@1.0.0", distinctId: "demo-user"))
}

var scratchDirectory: String {
    options.reportDirectory ?? NSTemporaryDirectory()
}

switch options.command {
case "help":
    print(helpText)
case "list":
    for kind in CrashKind.allCases {
        print("\(kind.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)) \(kind.summary)")
    }
case "crash":
    guard let kind = CrashKind(rawValue: options.word) else {
        usage("unknown crash kind '\(options.word)' (see CrashDemo list)")
    }
    installRecorder()
    applyAsyncHooks(options)
    Workers.park(count: options.parkedThreads, depth: options.parkDepth)
    sleepBeforeCrashing(options)
    if options.printFaultTime {  // scripts/bench-crash-exit: fault to process exit
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        say("fault_monotonic_ns \(Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec))")
    }
    let scratch = scratchDirectory
    crash(on: options.place) { kind.crash(scratchDirectory: scratch) }
case "run":
    // A clean launch: hand the previous launches' reports to the queue, deliver them, exit.
    let delivery = installRecorder()
    let summary = delivery?.wait(timeout: .seconds(30))
    // Deliver: our own flush, or the detached sender holding the queue meanwhile; bounded.
    var delivered = false
    let deadline = Date(timeIntervalSinceNow: 30)
    while !delivered && Date() < deadline {
        delivered = await Cohorly.shared?.flush() ?? false || Cohorly.shared?.queuedCount == 0
        if !delivered { try? await Task.sleep(for: .milliseconds(100)) }
    }
    print(
        "reports queued: \(summary?.queued ?? 0), unreadable: \(summary?.unreadable ?? 0), kept: \(summary?.kept ?? 0), delivered: \(delivered)"
    )
    exit(delivered ? 0 : 1)
case "bench-breadcrumbs":
    // What breadcrumbs cost on the track path (scripts/bench-breadcrumbs); --tracks N calls per client.
    BreadcrumbBench.run(count: options.tracks)
case "symbolicate-report":
    // What the next launch does with one report, timed in this fresh process: symbolication (the crashed
    // thread only with --crashed-only), then the event. scripts/bench-crash reads the line printed.
    do {
        let report = try CrashReport.decode(Data(contentsOf: URL(fileURLWithPath: options.word)))
        var eventOptions = ExceptionEventOptions()
        eventOptions.symbolicationBudget = options.crashedOnly ? .zero : .seconds(600)
        if options.crashedOnly { eventOptions.maxEventBytes = Int.max }
        let clock = ContinuousClock()
        let start = clock.now
        let symbols = ExceptionBuilder.symbolicate(
            options.crashedOnly ? onlyCrashed(report) : report, options: eventOptions)
        let symbolicated = clock.now
        let event = ExceptionBuilder.make(from: report, symbols: symbols, options: .init())
        let made = clock.now
        let frames = symbols.threads.compactMap { $0 }.joined()
        let bytes = CohorlyValue.object(["event": "$exception", "properties": .object(event.properties)]).jsonString
            .utf8.count
        print(
            "symbolicate_ms \(milliseconds(symbolicated - start)) event_ms \(milliseconds(made - symbolicated))"
                + " frames \(frames.count) resolved \(frames.filter { !$0.isEmpty }.count) event_bytes \(bytes)")
    } catch {
        usage("cannot read report \(options.word): \(error)")
    }
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
    // Prints what install costs: wall time and resident memory added (benchmarks read this line). With
    // --recorder-only it measures CrashRecorder.install alone, its options made first: an app that has
    // started has read its environment and warmed Foundation (URL, paths), and those one-time costs
    // (ProcessInfo's environment alone is ~500 KiB of code pages) are not the recorder's.
    // With COHORLY_PROBE set, install also records resident memory between its steps (one `step` line
    // each); COHORLY_PROBE_SMAPS=DIR copies /proc/self/smaps there at every step.
    _ = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("warm").path
    let environment = ProcessInfo.processInfo.environment
    let prepared = options.recorderOnly ? recorderOptions() : nil
    let probe = environment["COHORLY_PROBE"] != nil
    if probe { cly_test_probe_enable(environment["COHORLY_PROBE_SMAPS"]) }
    // The harness's own first uses (the clock; reading and parsing smaps_rollup, which costs ~128 KiB of code
    // pages after its figure is taken) happen before the baseline.
    _ = DispatchTime.now().uptimeNanoseconds
    _ = residentBytes()
    let residentBefore = residentBytes()
    cly_test_probe_mark("before install")
    let start = DispatchTime.now().uptimeNanoseconds
    if let prepared {
        do { try CrashRecorder.install(prepared) } catch { usage("install failed: \(error)") }
    } else {
        installRecorder()
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    cly_test_probe_mark("after install")
    // Install starts the scan for resume funclets without unwind info on a thread of its own; what stays resident
    // is measured once it is done (its working memory is unmapped then), and how long after install that was.
    _ = cly_test_wait_resume_points(10_000)
    let scanned = DispatchTime.now().uptimeNanoseconds - start - elapsed
    let residentAfter = residentBytes()
    cly_test_probe_mark("after measuring")
    print(
        "install_ns \(elapsed) resident_added_bytes \(residentAfter - residentBefore) resume_scan_after_ns \(scanned)")
    if probe { printProbeSteps() }
case "scenario" where options.word == "capture-error":
    // A handled error, sent at once: exits 0 once it is delivered, 1 when not within the flush.
    installRecorder()
    Cohorly.shared?.captureMessage("demo handled error")
    exit(await Cohorly.shared?.flush() == true ? 0 : 1)
case "throw-site":
    // A handled error thrown two calls below its catch (ThrowSiteScenario).
    if options.word == "chained" && demo_install_counting_throw_hook() != 0 { usage("the runtime has no throw hook") }
    installRecorder()
    guard let cohorly = Cohorly.shared else { usage("no client") }
    await ThrowSiteScenario.run(options.word, cohorly: cohorly)
case "hang":
    installRecorder()
    HangDemo.run(options.word, options: options)
case "scenario":
    // Signalled from outside: none blocked, as a service manager starts a process (the test runner's threads block
    // some, and a child inherits its parent thread's mask).
    if options.word == "wait-for-signal" { demo_unblock_all_signals() }
    if let mode = options.appSigterm { ExitScenario.prepareAppSignalHandling(mode) }  // the app's own, before ours
    installRecorder()
    Scenario.run(options.word, options: options)
default:
    usage(options.command.isEmpty ? "missing command" : "unknown command '\(options.command)'")
}

/// The report with its crashed thread only (what `symbolicate-report --crashed-only` times).
func onlyCrashed(_ report: CrashReport) -> CrashReport {
    var copy = report
    copy.threads = []
    return copy
}

/// A duration in milliseconds, 3 decimals.
func milliseconds(_ duration: Duration) -> String {
    let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    return String(format: "%.3f", value)
}

/// Resident set size from /proc/self/statm.
/// Prints the steps the install probe recorded: `step NAME rss_kib R anonymous_kib A`.
func printProbeSteps() {
    for index in 0..<cly_test_probe_count() {
        var rss: UInt64 = 0
        var anonymous: UInt64 = 0
        guard let name = cly_test_probe_step(Int32(index), &rss, &anonymous) else { continue }
        print(
            "step \(String(cString: name).replacingOccurrences(of: " ", with: "_")) rss_kib \(rss) anonymous_kib \(anonymous)"
        )
    }
}

/// Resident bytes now: `Rss` of /proc/self/smaps_rollup, which the kernel counts by walking the page tables
/// (statm's figure comes from per-thread counters that are only folded in now and then: tens of KiB off).
func residentBytes() -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8)) ?? ""
    let line = text.split(separator: "\n").first { $0.hasPrefix("Rss:") }
    let kib = line.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
    return kib * 1024
}

/// Waits before a scenario crashes or is killed: `--crash-after-ms` (nothing for 0 or less, at most 1,000 s: a
/// number from the command line never traps the conversion), then until the file `--until` names exists (at most
/// 60 s; a test creates it once the launch got as far as the test needs, however busy the machine).
func sleepBeforeCrashing(_ options: DemoOptions) {
    if options.crashAfterMilliseconds > 0 {
        usleep(UInt32(clamping: min(options.crashAfterMilliseconds, 1_000_000) * 1000))
    }
    guard let until = options.until else { return }
    let deadline = Date(timeIntervalSinceNow: 60)
    while !FileManager.default.fileExists(atPath: until) && Date() < deadline { usleep(10_000) }
}
