import CCrashRecorder
import Cohorly
import CohorlyFiles
import CohorlySymbols
import Foundation
import CohorlyLaunch

/// The detached sender: the Linux counterpart of a background URLSession.
///
/// An app that crashes moments after launch never lives long enough to deliver last launch's crash. So when
/// there are reports, `install` starts this executable again (`/proc/self/exe`) as a detached
/// process (new session, no inherited descriptors, stdio on /dev/null) with `COHORLY_CRASH_SENDER` set. In that
/// process a constructor in `CCrashRecorder` runs ``senderMain()`` before `main`: it takes over the reports the
/// app did not get to turn into events (see ``Handover``), opens the same persisted queue, delivers it until it is empty or the timeout passes, and exits — the app's own code never runs there.
/// Senders take turns (`crash-sender.lock`), and the client lets one process at a time send a queue
/// (`queue.lock`), so the app and its senders never send a record twice (the launch protocol, ``LaunchProtocol``).
enum CrashEventSender {
    static let modeVariable = "COHORLY_CRASH_SENDER"
    static let storageVariable = "COHORLY_CRASH_SENDER_STORAGE"
    static let hostVariable = "COHORLY_CRASH_SENDER_HOST"
    static let tokenVariable = "COHORLY_CRASH_SENDER_TOKEN"
    static let timeoutVariable = "COHORLY_CRASH_SENDER_TIMEOUT_MS"

    /// Starts the sender for `cohorly`'s queue. Returns whether the process started.
    static func spawn(for cohorly: Cohorly, timeout: Duration, extraEnvironment: [String: String] = [:]) -> Bool {
        guard let envp = environment(for: cohorly, timeout: timeout, extra: extraEnvironment) else { return false }
        let pid = withCStrings(arguments) { cArgv in
            withCStrings(envp) { cEnvp in cly_spawn_detached(executable, cArgv, cEnvp) }
        }
        return pid > 0
    }

    /// The executable a sender runs: this one.
    static let executable = "/proc/self/exe"
    /// A sender's argv: this process's name.
    static var arguments: [String] { [CommandLine.arguments.first ?? executable] }

    /// A sender's environment (`NAME=value` entries) for `cohorly`'s queue: this process's, `extra`, and the
    /// sender's own variables. Nil when the client has no queue directory.
    static func environment(for cohorly: Cohorly, timeout: Duration, extra: [String: String]) -> [String]? {
        guard let storage = cohorly.storageDirectoryPath else { return nil }
        var environment = ProcessInfo.processInfo.environment
        environment.merge(extra) { _, new in new }
        environment[modeVariable] = "1"
        environment[storageVariable] = storage
        environment[hostVariable] = cohorly.apiHost.absoluteString
        environment[tokenVariable] = cohorly.projectToken
        environment[timeoutVariable] = String(timeout.components.seconds * 1000)
        return environment.map { "\($0.key)=\($0.value)" }
    }

    /// The sender process: delivers the queue named in the environment (`Cohorly.sendQueued`: the retry
    /// contract's backoff between attempts, one sender per queue), then returns (the caller exits).
    static func senderMain() {
        let environment = ProcessInfo.processInfo.environment
        guard let storage = environment[storageVariable], let host = environment[hostVariable].flatMap(URL.init)
        else { return }
        let timeout = Double(environment[timeoutVariable] ?? "").map { $0 / 1000 } ?? 120
        let deadline = ContinuousClock.now.advanced(by: .seconds(clampingSeconds: timeout))
        // Senders of one queue take turns (a crash loop starts one per launch): a later one waits for the one
        // before it to finish rather than failing against its lock and backing off.
        let turn = LockFile(.crashSender, in: storage)
        guard turn.lock(until: deadline) else { return }
        defer { turn.close() }
        TextTable.demanglesInBackground.store(false, ordering: .relaxed)
        // On this thread, without Swift concurrency: this runs from a C constructor, before the Swift runtime's
        // own start-up in a statically linked program, where a task never ran (the sender waited for it forever).
        _ = Cohorly.sendQueuedBlocking(
            storageDirectory: URL(fileURLWithPath: storage), apiHost: host, token: environment[tokenVariable],
            timeout: max(1, ContinuousClock.now.duration(to: deadline).inSeconds), options: .default
        ) { client in
            // Reports the app handed over (it may have died before turning them into events) first.
            takeOverReports(storage: storage, into: client, deadline: deadline)
        }
    }

    static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R)
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
