import CCrashRecorder
import CohorlyCrash
import CrashDemoSupport
import Foundation

/// Launches that end without a crash, for the abnormal-exit tests (`CrashDemo scenario NAME`): the next launch
/// (`CrashDemo run`) reports the ones that ended abnormally.
enum ExitScenario {
    static let names = [
        "sigkill", "exec-sleep", "exec-prepared", "allocate", "idle-cpu", "wait-for-signal",
        "exit-during-symbolication", "die-during-symbolication",
    ]

    /// `--app-sigterm MODE`, before install: `exit` and `continue` install the app's handler, `ignore` SIG_IGN;
    /// `dispatch` does its part after install (``startDispatchSource()``).
    static func prepareAppSignalHandling(_ mode: String) {
        switch mode {
        case "exit", "continue":
            if demo_install_sigterm_handler() != 0 { usage("cannot install the SIGTERM handler") }
        case "ignore": signal(SIGTERM, SIG_IGN)
        case "dispatch": break
        default: usage("unknown --app-sigterm mode '\(mode)' (exit, continue, ignore, dispatch)")
        }
    }

    /// SIGTERMs the app's dispatch source delivered.
    nonisolated(unsafe) static var dispatchedSignals = 0
    static let signalQueue = DispatchQueue(label: "demo.signals")

    /// What a server framework's graceful shutdown does after install (ServiceLifecycle's `UnixSignalsSequence`,
    /// Vapor): SIGTERM ignored, then a dispatch signal source for it, resumed and registered (libdispatch then puts
    /// its own handler in place). Prints `monitor watches SIGTERM` once the termination monitor has wrapped that.
    static func startDispatchSource() {
        signal(SIGTERM, SIG_IGN)
        let registered = DispatchSemaphore(value: 0)
        let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: signalQueue)
        source.setEventHandler {
            dispatchedSignals += 1
            say("app source: SIGTERM")
        }
        source.setRegistrationHandler { registered.signal() }
        source.resume()
        registered.wait()
        keptSource = source
        let deadline = Date(timeIntervalSinceNow: 30)
        while !cly_termination_watches(SIGTERM) && Date() < deadline { usleep(1000) }
        say(cly_termination_watches(SIGTERM) ? "monitor watches SIGTERM" : "monitor does not watch SIGTERM")
    }
    nonisolated(unsafe) static var keptSource: DispatchSourceSignal?

    /// A quick relaunch (a CLI tool, a health check): exits normally the moment the delivery of the last launch's
    /// crash is symbolicating it (its `.symbolicating` marker exists), printing the marker's mode; `dying`: is
    /// SIGKILLed then instead, as if symbolication had ended the process.
    static func endDuringSymbolication(_ options: DemoOptions, dying: Bool) -> Never {
        let directory = options.reportDirectory ?? ""
        let deadline = Date(timeIntervalSinceNow: 30)
        while Date() < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            if let marker = names.first(where: { $0.hasSuffix(".symbolicating") }) {
                var info = stat()
                let found = stat(directory + "/" + marker, &info) == 0
                say("symbolicating marker mode \(found ? String(info.st_mode & 0o777, radix: 8) : "gone")")
                if dying { kill(getpid(), SIGKILL) }
                exit(0)
            }
            if !names.contains(where: { $0.hasSuffix(".json") }) {
                say("symbolication finished first")
                exit(0)
            }
            usleep(500)
        }
        exit(96)
    }

    /// Waits to be ended by a signal (at most 60 s, or until the `--until` file exists). With the app's handler
    /// (`--app-sigterm exit`), a SIGTERM makes it exit with status 7; with `continue` or `dispatch` (a shutdown
    /// that does not finish) it goes on waiting.
    static func waitForSignal(_ options: DemoOptions) -> Never {
        if options.appSigterm == "dispatch" { startDispatchSource() }
        let deadline = Date(timeIntervalSinceNow: 60)
        var reported = 0
        while Date() < deadline {
            if let until = options.until, FileManager.default.fileExists(atPath: until) {
                say("sigterm ignored \(demo_sigterm_is_ignored())")
                exit(0)
            }
            let count = Int(demo_sigterm_count()) + signalQueue.sync { dispatchedSignals }
            if count > reported {
                reported = count
                if options.appSigterm == "exit" {
                    say("exiting after SIGTERM")
                    exit(7)
                }
                say("going on after SIGTERM")
            }
            usleep(5_000)
        }
        exit(96)
    }

    static func run(_ name: String, options: DemoOptions) -> Never {
        say("insert id \(CrashRecorder.pendingInsertId)")
        switch name {
        case "sigkill":
            sleepBeforeCrashing(options)  // with --until: runs until the file exists
            kill(getpid(), SIGKILL)  // what the OOM killer or `kill -9` does: no handler runs
        case "exec-sleep":
            // Becomes another program (same pid): not an abnormal exit of this launch.
            execProgram(["/bin/sleep", "60"])
        case "exec-prepared":
            CohorlyCrash.prepareForExec()
            execProgram(["/bin/true"])
        case "allocate":
            allocateUntilKilled()
        case "exit-during-symbolication", "die-during-symbolication":
            endDuringSymbolication(options, dying: name.hasPrefix("die"))
        case "wait-for-signal":
            waitForSignal(options)
        case "idle-cpu":
            // CPU time this process uses over 2 s of idling after install (scripts/bench-exits reads the line):
            // with the memory sampler at --memory-sample-ms, and without it (--no-abnormal-exits).
            let before = cpuNanoseconds()
            usleep(2_000_000)
            say("idle_cpu_ns \(cpuNanoseconds() - before)")
            exit(0)
        default:
            usage("unknown scenario '\(name)'")
        }
        exit(97)
    }

    static func cpuNanoseconds() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let seconds = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
        return seconds * 1_000_000_000 + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000
    }

    static func execProgram(_ arguments: [String]) -> Never {
        var argv = arguments.map { strdup($0) }
        argv.append(nil)
        execv(arguments[0], &argv)
        usage("cannot exec \(arguments[0]): \(String(cString: strerror(errno)))")
    }

    /// Touches 1 MiB after 1 MiB until the kernel kills the process (the OOM test runs it in a small cgroup).
    static func allocateUntilKilled() -> Never {
        var blocks: [UnsafeMutableRawPointer] = []
        while blocks.count < 1 << 20 {
            guard let block = malloc(1 << 20) else { break }
            memset(block, 1, 1 << 20)
            blocks.append(block)
        }
        exit(98)  // not killed: the limit was not applied
    }
}
