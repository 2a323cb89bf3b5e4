import CohorlyCrash
import Foundation

/// Launches that end without a crash, for the abnormal-exit tests (`CrashDemo scenario NAME`): the next launch
/// (`CrashDemo run`) reports the ones that ended abnormally.
enum ExitScenario {
    static let names = ["sigkill", "exec-sleep", "exec-prepared", "allocate", "idle-cpu"]

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
