import CCrashRecorder
import Cohorly
import Foundation
import Synchronization

/// The detached sender: the Linux counterpart of a background URLSession.
///
/// An app that crashes moments after launch never lives long enough to deliver last launch's crash. So once
/// crash events are durably queued, `install` starts this executable again (`/proc/self/exe`) as a detached
/// process (new session, no inherited descriptors, stdio on /dev/null) with `COHORLY_CRASH_SENDER` set. In that
/// process a constructor in `CCrashRecorder` runs ``senderMain()`` before `main`: it opens the same persisted
/// queue, flushes until it is empty or the timeout passes, and exits — the app's own code never runs there.
/// One sender at a time per queue (an exclusive `flock`); a second one waits for the first, then finds less to do.
enum CrashEventSender {
    static let modeVariable = "COHORLY_CRASH_SENDER"
    static let storageVariable = "COHORLY_CRASH_SENDER_STORAGE"
    static let hostVariable = "COHORLY_CRASH_SENDER_HOST"
    static let tokenVariable = "COHORLY_CRASH_SENDER_TOKEN"
    static let timeoutVariable = "COHORLY_CRASH_SENDER_TIMEOUT_MS"

    /// Starts the sender for `cohorly`'s queue. Returns whether the process started.
    static func spawn(for cohorly: Cohorly, timeout: Duration) -> Bool {
        guard let storage = cohorly.storageDirectoryPath else { return false }
        var environment = ProcessInfo.processInfo.environment
        environment[modeVariable] = "1"
        environment[storageVariable] = storage
        environment[hostVariable] = cohorly.apiHost.absoluteString
        environment[tokenVariable] = cohorly.projectToken
        environment[timeoutVariable] = String(timeout.components.seconds * 1000)
        let executable = "/proc/self/exe"
        let argv = [CommandLine.arguments.first ?? executable]
        let envp = environment.map { "\($0.key)=\($0.value)" }

        let pid = withCStrings(argv) { cArgv in
            withCStrings(envp) { cEnvp in cly_spawn_detached(executable, cArgv, cEnvp) }
        }
        return pid > 0
    }

    /// The sender process: flushes the queue named in the environment, then returns (the caller exits).
    static func senderMain() {
        let environment = ProcessInfo.processInfo.environment
        guard let storage = environment[storageVariable], let host = environment[hostVariable].flatMap(URL.init)
        else { return }
        let timeoutMs = Int(environment[timeoutVariable] ?? "") ?? 120_000
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        let lock = open(storage + "/crash-sender.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard lock >= 0 else { return }
        defer { close(lock) }
        while flock(lock, LOCK_EX | LOCK_NB) != 0 {
            if ContinuousClock.now >= deadline { return }
            usleep(50_000)  // another sender owns the queue; wait for it (bounded by the deadline)
        }
        var options = CohorlyOptions.default
        options.storageDirectory = URL(fileURLWithPath: storage)
        let client = Cohorly(apiHost: host, token: environment[tokenVariable], options: options)
        var pause = Duration.milliseconds(500)
        while client.queuedCount > 0 && ContinuousClock.now < deadline {
            if blockingFlush(client) { continue }
            let remaining = deadline - ContinuousClock.now
            let wait = min(pause, remaining)
            if wait > .zero {
                usleep(UInt32(wait.components.seconds * 1_000_000 + wait.components.attoseconds / 1_000_000_000_000))
            }
            pause = min(pause * 2, .seconds(8))
        }
        client.shutdown()
    }

    private static func blockingFlush(_ client: Cohorly) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex(false)
        Task.detached {
            let delivered = await client.flush()
            result.withLock { $0 = delivered }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R)
        -> R
    {
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        pointers.append(nil)
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}

/// Entry point the `CCrashRecorder` constructor calls in a process started as the detached sender.
@_cdecl("cohorly_crash_sender_main")
public func cohorlyCrashSenderMain() {
    CrashEventSender.senderMain()
}
