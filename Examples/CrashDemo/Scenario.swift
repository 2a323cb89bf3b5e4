import CCrashRecorder
import Cohorly
import CohorlyCrash
import CrashDemoSupport
import Dispatch
import Foundation

/// Crash scenarios beyond one kind on one thread, used by the recorder's tests.
enum Scenario {
    static let names =
        [
            "concurrent", "context-race", "fork", "cxx-catch", "install-twice", "dlopen-crash",
            "handler-fault",
            "blocked-thread", "install-cost", "small-report", "identify-then-crash", "reset-then-crash",
            "register-then-crash", "handler-unwinds", "async-idle", "async-capture", "capture-error",
            "sleeping-main",
            "resume-points",
            "task-breadcrumbs",
            "crash-while-symbolicating", "crash-inside-symbolicating", "sender-start-cost",
        ] + BreadcrumbScenarios.names + ServerScenarios.names

    static func run(_ name: String, options: DemoOptions) -> Never {
        switch name {
        case _ where ExitScenario.names.contains(name): ExitScenario.run(name, options: options)
        case "concurrent": concurrent()
        case "context-race": contextRace()
        case "fork": forkThenCrash()
        case "cxx-catch":
            let caught = demo_cxx_catch() == 1
            say(caught ? "caught" : "not caught")
            exit(caught ? 0 : 1)
        case "install-twice":
            installRecorder()
            say("installed twice")
            demo_null_write()
        case "dlopen-crash":
            guard let library = options.library else { usage("dlopen-crash needs --library PATH") }
            CrashRecorder.refreshModules()
            if demo_crash_in_library(library) != 0 { usage("cannot load \(library)") }
        case "handler-fault":
            cly_test_fault_in_writer(true)
            crash(on: "main") { CrashKind.fatalError.crash(scratchDirectory: "/tmp") }
        case "blocked-thread":
            blockedThread()
        case "sleeping-main":
            sleepingMain()
        case "crash-while-symbolicating":
            crashWhileSymbolicating(onThatThread: false, directory: options.reportDirectory ?? "/tmp")
        case "crash-inside-symbolicating":
            crashWhileSymbolicating(onThatThread: true, directory: options.reportDirectory ?? "/tmp")
        case "sender-start-cost": senderStartCost()
        case "identify-then-crash":
            // The crash-time context follows the client's identity after install.
            Cohorly.shared?.identify("identified-after-install")
            demo_null_write()
        case "register-then-crash":
            // Crash events carry the super properties of the moment of the crash.
            Cohorly.shared?.register(["plan": "pro", "seats": 3])
            Cohorly.shared?.register(["plan": "team"])
            Cohorly.shared?.unregister("seats")
            Cohorly.shared?.register(["cart": ["items": 2]])
            demo_null_write()
        case "reset-then-crash":
            Cohorly.shared?.reset()
            say("anonymous id \(Cohorly.shared?.currentDistinctId ?? "")")
            demo_null_write()
        case "small-report":
            // An 8 KiB cap with 20 threads x 100 frames (v2 frames carry their kind: ~50 bytes each): the cap drops
            // frames and threads, the JSON stays whole.
            cly_test_set_report_limit(8 * 1024)
            Workers.park(count: 17, depth: 110)
            demo_null_write()
        case "handler-unwinds":
            handlerUnwinds()
        case "async-idle":
            AsyncParking.runToEndThenCrash()
        case "async-capture":
            AsyncCaptures.run()
        case "resume-points":
            AsyncRuntimeCrash.printResumePoints()
        case "install-cost":
            exit(0)  // measured by main.swift around installRecorder()
        case "capture-error":
            exit(0)  // main.swift: a handled error, then a flush
        case "task-breadcrumbs":
            TaskBreadcrumbScenario.run()
        case let name where BreadcrumbScenarios.names.contains(name):
            BreadcrumbScenarios.run(name, options: options)
        case let name where ServerScenarios.names.contains(name):
            ServerScenarios.run(name)
        default:
            usage("unknown scenario '\(name)' (\((names + ExitScenario.names).joined(separator: ", ")))")
        }
        exit(97)
    }

    /// Every thread unwinds itself from a signal handler under the allocation guard (when preloaded), then
    /// the crash runs the recorder's handler with the crashing thread armed (RecorderScenarioTests).
    static func handlerUnwinds() -> Never {
        Workers.park(count: 3, depth: 5)
        AsyncParking.park()
        var result = demo_handler_unwinds()
        if demo_unwind_threads_in_handlers(&result) != 0 { usage("cannot signal the threads") }
        say(
            "guard \(result.guard_loaded) self_test \(result.self_test_calls) threads \(result.threads)"
                + " answered \(result.answered) fewest_frames \(result.fewest_frames)"
                + " most_frames \(result.most_frames) chains \(result.chains) guard_calls \(result.guard_calls)")
        if demo_arm_guard_for_crash() != 0 { usage("no recorder handler to arm") }
        demo_null_write()
        exit(97)
    }

    /// A thread that blocks every signal (it can never answer) is listed without frames, and the crash
    /// does not wait for it.
    /// The main thread sleeps in `sleep()` while a background thread crashes (a null write, SIGSEGV). The crash
    /// handler's capture signal interrupts that sleep (EINTR): were the main thread let go before the process died,
    /// it would exit with status 3 and a supervisor would read an ordinary exit.
    static func sleepingMain() -> Never {
        let mainTid = cly_live_current_tid()
        Thread {
            CrashRecorder.prepareCurrentThread()
            demo_set_thread_name("demo-crasher")
            // Crash once the main thread is inside its sleep (clock_nanosleep, or nanosleep: its syscall number).
            let path = "/proc/self/task/\(mainTid)/syscall"
            let deadline = Date(timeIntervalSinceNow: 30)
            while Date() < deadline {
                let call = (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: " ").first
                if let number = call.flatMap({ Int($0) }), demo_is_sleep_syscall(number) != 0 { break }
                usleep(1000)
            }
            demo_null_write()
        }.start()
        sleep(60)
        exit(3)
    }

    static func blockedThread() -> Never {
        let ready = DispatchSemaphore(value: 0)
        Thread {
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, nil)
            demo_set_thread_name("blocked")
            ready.signal()
            while opaqueStop < 0 { sleep(60) }
        }.start()
        ready.wait()
        demo_null_write()
        exit(97)
    }

    /// A thread symbolicates a report (its marker `<directory>/earlier.json.symbolicating` made, as
    /// SymbolicationGuard makes it), and the crash happens on the main thread meanwhile, or (`onThatThread`) on
    /// the symbolicating thread itself: only then did the launch die inside symbolication.
    static func crashWhileSymbolicating(onThatThread: Bool, directory: String) -> Never {
        let marker = "\(directory)/earlier.json.symbolicating"
        let made = DispatchSemaphore(value: 0)
        Thread {
            guard cly_symbolication_marker_set(marker) == 0,
                FileManager.default.createFile(atPath: marker, contents: Data("\(getpid())\n".utf8)),
                cly_symbolication_marker_made()
            else { usage("cannot make \(marker)") }
            made.signal()
            if onThatThread { demo_null_write() }
            while opaqueStop < 0 { sleep(60) }
        }.start()
        made.wait()
        if !onThatThread { demo_null_write() }
        while true { sleep(60) }
    }

    /// What starting the crash-time sender holds the crashing thread for (scripts/bench-crash-delivery): the prepared
    /// sender started 20 times exactly as the crash handler starts it, each for a report that does not exist (the
    /// sender finds nothing to take over and ends). One line: `sender-start-ns N N …`.
    static func senderStartCost() -> Never {
        var times: [String] = []
        for _ in 0..<20 {
            var blocked: UInt64 = 0
            let pid = cly_crash_time_sender_start_for_test("bench-no-such-report.json", &blocked)
            if pid <= 0 { usage("the sender did not start: \(-pid)") }
            times.append(String(blocked))
        }
        say("sender-start-ns " + times.joined(separator: " "))
        exit(0)
    }

    /// Eight threads reach a null write at the same moment.
    static func concurrent() -> Never {
        let count = 8
        let started = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        for _ in 0..<count {
            Thread {
                started.signal()
                go.wait()
                demo_null_write()
            }.start()
        }
        for _ in 0..<count { started.wait() }
        for _ in 0..<count { go.signal() }
        while true { sleep(60) }
    }

    /// Another thread rewrites the context as fast as it can while this one crashes; a report must hold
    /// a context whose two counters agree.
    static func contextRace() -> Never {
        let running = DispatchSemaphore(value: 0)
        Thread {
            var counter = 0
            while true {
                counter += 1
                CrashRecorder.updateContext {
                    $0.properties["counter"] = String(counter)
                    $0.distinctId = "user-\(counter)"
                    $0.properties["padding"] = String(repeating: "x", count: counter % 3000)
                }
                if counter == 1000 { running.signal() }
            }
        }.start()
        running.wait()
        demo_null_write()
        exit(97)
    }

    /// The child and then the parent crash: two reports with different insert ids.
    static func forkThenCrash() -> Never {
        let child = fork()
        if child == 0 { demo_null_write() }
        var status: Int32 = 0
        waitpid(child, &status, 0)
        say("child status \(status)")
        demo_null_write()
        exit(97)
    }
}

/// Writes a line to stdout unbuffered (the process is about to crash; print's buffer would be lost).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
