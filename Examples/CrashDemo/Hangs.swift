import Cohorly
import CohorlyCrash
import CrashDemoSupport
import Dispatch
import Foundation

/// `CrashDemo hang WORD`: the hang watchdog's cases (install with `--hang-threshold-ms`; the hang lasts
/// `--hang-ms`). Every hang the watchdog reports is printed as a `hang subject=…` line.
///   main        the main thread (servicing the main queue) blocks in `demoHangInKnownFunction`
///   executor    a job of a `WatchedExecutor` blocks there
///   heartbeat   a thread beating a `Heartbeat` blocks there
///   forever     the main thread blocks there until the process is killed (prints "hanging" first)
///   crash-while-hung  the main thread blocks there; once the hang's file exists another thread crashes
///   busy        busy but progressing: short main-queue jobs and a beating CPU-bound thread, no hang
///   plain-loop  the main thread runs a plain loop and never services the main queue: not watched, no hang
///   idle        an idle app (dispatchMain) for `--hang-ms`; prints the watchdog thread's CPU time (benchmark)
/// Each case but `forever` waits for the hang's event, flushes the client and exits 0.
enum HangDemo {
    static let names = ["main", "executor", "heartbeat", "forever", "crash-while-hung", "busy", "plain-loop", "idle"]

    static func run(_ word: String, options: DemoOptions) -> Never {
        let reported = reportedSemaphore
        CohorlyCrash.hangObserver.withLock {
            $0 = { line in
                say(line)
                reportedSemaphore.signal()
            }
        }
        let hang = Double(options.hangMilliseconds) / 1000
        let threshold = Double(options.hangThresholdMilliseconds ?? 1000) / 1000
        switch word {
        case "main", "forever":
            // After the watchdog's first ping was answered (the main thread is watched from then on).
            DispatchQueue.main.asyncAfter(deadline: .now() + threshold) {
                if word == "forever" { say("hanging") }
                demoHangInKnownFunction(seconds: word == "forever" ? .infinity : hang)
                finish(after: reported)
            }
        case "crash-while-hung":
            let directory = options.reportDirectory ?? ""
            DispatchQueue.main.asyncAfter(deadline: .now() + threshold) {
                Thread.detachNewThread {
                    // The watchdog captured the threads and wrote the hang file: now a crash, with the live
                    // capture's handler in place.
                    let deadline = Date(timeIntervalSinceNow: 10)
                    while Date() < deadline
                        && !((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains(where: {
                            $0.hasPrefix("hang-")
                        })
                    {
                        usleep(10_000)
                    }
                    demo_null_write()
                }
                demoHangInKnownFunction(seconds: .infinity)
            }
        case "executor":
            let executor = CohorlyCrash.WatchedExecutor(name: "demo executor")
            executor.async { demoHangInKnownFunction(seconds: hang) }
            executor.async { finish(after: reported) }
        case "heartbeat":
            Thread.detachNewThread {
                let heartbeat = CohorlyCrash.Heartbeat(name: "demo loop")
                demoHangInKnownFunction(seconds: hang)
                heartbeat.stop()
                finish(after: reported)
            }
        case "busy":
            busyButProgressing(seconds: hang, threshold: threshold)
        case "plain-loop":
            demoHangInKnownFunction(seconds: hang)
            say("hangs reported: \(reported.wait(timeout: .now() + threshold * 2) == .success ? 1 : 0)")
            exitFlushed(0)
        case "idle":
            idle(seconds: hang)
        default:
            usage("unknown hang case '\(word)' (\(names.joined(separator: ", ")))")
        }
        dispatchMain()
    }

    /// Waits (bounded, off the watched thread) for the hang's event, then flushes and exits.
    static func finish(after reported: DispatchSemaphore) {
        DispatchQueue.global().async {
            let got = reported.wait(timeout: .now() + 10) == .success
            exitFlushed(got ? 0 : 1)
        }
    }

    static func exitFlushed(_ status: Int32) -> Never {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            _ = await Cohorly.shared?.flush()
            done.signal()
        }
        _ = done.wait(timeout: .now() + 10)
        exit(status)
    }

    /// Main-queue jobs of a tenth of the threshold, back to back, and a thread beating between CPU-bound steps
    /// of the same length, for `seconds`; then says how many hangs were reported (none expected).
    static func busyButProgressing(seconds: Double, threshold: Double) {
        let end = Date(timeIntervalSinceNow: seconds)
        let step = threshold / 10
        Thread.detachNewThread {
            let heartbeat = CohorlyCrash.Heartbeat(name: "busy loop")
            while Date() < end {
                spin(seconds: step)
                heartbeat.beat()
            }
            heartbeat.stop()
        }
        @Sendable func job() {
            spin(seconds: step)
            if Date() < end {
                DispatchQueue.main.async { job() }
            } else {
                // One more threshold for a late report to show up, then the count.
                DispatchQueue.global().async {
                    let count = (0..<3).filter { _ in reportedSemaphore.wait(timeout: .now() + threshold) == .success }
                    say("hangs reported: \(count.count)")
                    exitFlushed(0)
                }
            }
        }
        DispatchQueue.main.async { job() }
    }

    /// An idle app for `seconds`: prints the CPU time of the watchdog thread (`cohorly-hangs`) and of the
    /// whole process over that time.
    static func idle(seconds: Double) {
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
            let watchdogBefore = threadCPUNanoseconds(named: "cohorly-hangs")
            let processBefore = processCPUNanoseconds()
            let start = DispatchTime.now().uptimeNanoseconds
            Thread.sleep(forTimeInterval: seconds)
            let wall = DispatchTime.now().uptimeNanoseconds - start
            let watchdog = threadCPUNanoseconds(named: "cohorly-hangs") - watchdogBefore
            let process = processCPUNanoseconds() - processBefore
            say("idle_wall_ns \(wall) watchdog_cpu_ns \(watchdog) process_cpu_ns \(process)")
            exit(0)
        }
    }
}

/// Every hang reported (the `busy` case counts them).
let reportedSemaphore = DispatchSemaphore(value: 0)

/// Blocks the calling thread for `seconds` (sleeping, so it holds no CPU), whatever signals interrupt it.
@inline(never)
func demoHangInKnownFunction(seconds: Double) {
    let end = DispatchTime.now().uptimeNanoseconds + nanoseconds(seconds)
    while DispatchTime.now().uptimeNanoseconds < end {
        var remaining = timespec(tv_sec: 0, tv_nsec: 50_000_000)
        nanosleep(&remaining, nil)
    }
}

/// Keeps the CPU busy for `seconds`.
func spin(seconds: Double) {
    let end = DispatchTime.now().uptimeNanoseconds + nanoseconds(seconds)
    var x = 0
    while DispatchTime.now().uptimeNanoseconds < end { x &+= 1 }
    _ = x
}

/// CPU time of the first thread named `name`, in nanoseconds: its kernel CPU clock, made from its tid as
/// glibc's pthread_getcpuclockid does (`(~tid << 3) | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED`).
func threadCPUNanoseconds(named name: String) -> UInt64 {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    for task in tasks {
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
        guard comm.trimmingCharacters(in: .whitespacesAndNewlines) == name, let tid = Int32(task) else { continue }
        return cpuNanoseconds(clockid_t((~tid) << 3 | 4 | 2))
    }
    return 0
}

/// CPU time of the whole process, in nanoseconds.
func processCPUNanoseconds() -> UInt64 { cpuNanoseconds(CLOCK_PROCESS_CPUTIME_ID) }

func cpuNanoseconds(_ clock: clockid_t) -> UInt64 {
    var time = timespec()
    guard clock_gettime(clock, &time) == 0 else { return 0 }
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// `seconds` in nanoseconds, held within 0…10^6 s (a `--hang-ms` from the command line never traps).
func nanoseconds(_ seconds: Double) -> UInt64 {
    UInt64(max(0, min(seconds, 1e6)) * 1e9)
}
