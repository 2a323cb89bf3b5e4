import CohorlyCollector
import CohorlyJSON
import Foundation
import TestWaiting

/// Launches of a static CrashDemo against a loopback collector, with their queue and reports in one directory.
struct Launches {
    let executable: URL
    let collector: Collector
    let root: URL
    /// Where the launches send (default: the collector).
    var host: URL
    var storage: URL { root.appendingPathComponent("storage") }
    var reports: URL { root.appendingPathComponent("reports") }

    init(_ executable: URL, collector configure: (inout CollectorConfiguration) -> Void = { _ in }) throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["demo-token"]
        configure(&configuration)
        collector = try Collector(configuration: configuration)
        _ = try collector.start()
        root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cohorly-static-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        self.executable = executable
        host = collector.baseURL
    }

    /// A launch with `arguments` (plus the queue, the report directory and `senderTimeout`), not waited for. A
    /// crash starts no sender of its own (`--no-sender-at-crash`, as the crash tests' launches do) unless
    /// `senderAtCrash`: most of these tests look at the report a crash leaves and at the senders launches start.
    func start(_ arguments: [String], senderTimeoutMilliseconds: Int = 15_000, senderAtCrash: Bool = false) throws
        -> (Process, URL)
    {
        let process = Process()
        process.executableURL = executable
        process.arguments =
            arguments + [
                "--storage", storage.path, "--report-dir", reports.path, "--sender-timeout-ms",
                String(senderTimeoutMilliseconds),
            ] + (senderAtCrash ? [] : ["--no-sender-at-crash"])
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("COHORLY_") }
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment["COHORLY_HOST"] = host.absoluteString
        environment["COHORLY_TOKEN"] = "demo-token"
        process.environment = environment
        let stderr = root.appendingPathComponent("stderr-\(UUID().uuidString.prefix(8))")
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        return (process, stderr)
    }

    /// A launch run to its end: how it ended, and what it printed on stderr.
    func run(_ arguments: [String], senderTimeoutMilliseconds: Int = 15_000, senderAtCrash: Bool = false)
        async throws -> Ending
    {
        let (process, stderr) = try start(
            arguments, senderTimeoutMilliseconds: senderTimeoutMilliseconds, senderAtCrash: senderAtCrash)
        await waitForExit(process)
        return Ending(process, stderr: (try? String(contentsOf: stderr, encoding: .utf8)) ?? "")
    }

    /// The `$insert_id`s of the crash events the collector holds.
    func receivedInsertIds() -> [String] {
        ((try? collector.store.events(matching: EventQuery(event: "$exception", limit: 100))) ?? []).compactMap(
            \.insertId)
    }

    /// The function names of the crashed thread's frames of each crash event the collector holds (empty names
    /// for frames sent as bare addresses).
    func crashedThreadFunctions() -> [[String]] {
        ((try? collector.store.events(matching: EventQuery(event: "$exception", limit: 100))) ?? []).map { event in
            let properties = CohorlyValue(json: event.propertiesJSON)?.objectValue ?? [:]
            let frames =
                properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
            return frames.map { $0["function"]?.stringValue ?? "" }
        }
    }

    /// The `$insert_id`s of the reports in the report directory (`<time>-<pid>-<insert id>.json`).
    func reportInsertIds() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: reports.path)) ?? []).filter { $0.hasSuffix(".json") }
            .sorted().map { name in
                String(name.dropLast(".json".count).split(separator: "-", maxSplits: 2).last ?? "").lowercased()
            }
    }

    /// The detached senders of this queue that still run (found by the queue directory in their environment).
    func runningSenders() -> [pid_t] {
        let wanted = Array("COHORLY_CRASH_SENDER_STORAGE=\(storage.path)".utf8)
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(pid_t.init)
        return pids.filter { pid in
            Self.contents(of: "/proc/\(pid)/environ").split(separator: 0).contains { $0.elementsEqual(wanted) }
        }
    }

    /// Whether `launch` has started a process (its detached sender: a launch starts no other).
    static func hasStartedASender(_ launch: pid_t) -> Bool {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(launch)/task")) ?? []
        return threads.contains { !contents(of: "/proc/\(launch)/task/\($0)/children").isEmpty }
    }

    /// Ends whatever sender is left and removes the directory.
    func finish() {
        for pid in runningSenders() { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(at: root)
        collector.stop()
    }

    private static func contents(of path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return count == 0 ? bytes : [] }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}

/// How a launch ended.
struct Ending: CustomStringConvertible {
    /// The signal that ended it, or nil when it exited.
    let signal: Int32?
    /// Its exit status when it exited.
    let status: Int32?
    let stderr: String

    init(_ process: Process, stderr: String) {
        let signaled = process.terminationReason == .uncaughtSignal
        signal = signaled ? process.terminationStatus : nil
        status = signaled ? nil : process.terminationStatus
        self.stderr = stderr
    }

    var description: String {
        (signal.map { "signal \($0)" } ?? "exit \(status ?? -1)") + (stderr.isEmpty ? "" : ": \(stderr.suffix(2000))")
    }
}
