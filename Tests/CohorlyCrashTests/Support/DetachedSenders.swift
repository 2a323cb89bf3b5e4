import Foundation

@testable import CohorlyCrash

/// The detached crash senders (`CrashEventSender`) that CrashDemo launches start, seen through `/proc`.
///
/// A sender outlives its launch (that is its point), so it can outlive the test too: one still retrying sent to
/// whatever collector listened on that port next. (One still waiting for its turn when the test removed its
/// directory used to make the queue directory again; it no longer does.)
enum DetachedSenders {
    /// The processes sending a queue under `root` (found by the queue directory in their environment).
    static func running(under root: URL) -> [pid_t] {
        let prefix = Array("\(CrashEventSender.storageVariable)=\(root.path)/".utf8)
        return processIds().filter { pid in
            // A zombie, or a process gone meanwhile, has no environment left: it no longer runs.
            contents(of: "/proc/\(pid)/environ").split(separator: 0).contains { $0.starts(with: prefix) }
        }
    }

    /// Ends the senders of every queue under `root` and waits until they are gone, at most `timeout` seconds (a
    /// safety net, not a timing claim). Returns whether none runs any more.
    @discardableResult
    static func stop(under root: URL, timeout: Double = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let senders = running(under: root)
            if senders.isEmpty { return true }
            guard Date() < deadline else { return false }
            for pid in senders { kill(pid, SIGKILL) }
            usleep(5_000)
        }
    }

    /// Whether process `pid` has the file at `path` open.
    static func has(_ pid: pid_t, open path: String) -> Bool {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return descriptors.contains {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) == path
        }
    }

    /// The process that has `argument` on its command line (a launch's `--until` file), if one runs.
    static func process(withArgument argument: String) -> pid_t? {
        let wanted = Array(argument.utf8)
        return processIds().first { pid in
            contents(of: "/proc/\(pid)/cmdline").split(separator: 0).contains { $0.elementsEqual(wanted) }
        }
    }

    /// Whether `launch` started a process: its detached sender (a launch starts no other), running or ended and
    /// not reaped yet.
    static func hasStartedASender(_ launch: pid_t) -> Bool {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(launch)/task")) ?? []
        return threads.contains { !contents(of: "/proc/\(launch)/task/\($0)/children").isEmpty }
    }

    private static func processIds() -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(pid_t.init).filter {
            $0 != getpid()
        }
    }

    /// The bytes of a `/proc` file, empty when it cannot be read.
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

/// Removes a test's directory once no detached sender of a queue under it runs (see ``DetachedSenders``).
func removeLaunchDirectory(_ root: URL) {
    DetachedSenders.stop(under: root)
    try? FileManager.default.removeItem(at: root)
}

/// Lets the launch that waits for `go` (`--until`) crash or be killed once it started its detached sender, so each
/// launch of a crash loop hands over what it found before it dies, however busy the machine (a fixed delay before
/// the crash raced the launch's own start on a loaded machine, and launches died before starting their sender).
/// Creates `go` in any case; throws when the sender did not start within 60 s (a safety net).
func releaseOnceItsSenderStarted(_ go: URL) async throws {
    defer { _ = FileManager.default.createFile(atPath: go.path, contents: nil) }
    var launch: pid_t?
    try await waitUntil("the launch waiting for \(go.lastPathComponent) started its detached sender", seconds: 60) {
        launch = launch ?? DetachedSenders.process(withArgument: go.path)
        return launch.map(DetachedSenders.hasStartedASender) ?? false
    }
}
