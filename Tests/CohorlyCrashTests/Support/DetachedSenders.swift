import Foundation

@testable import CohorlyCrash

/// The detached crash senders (`CrashEventSender`) that CrashDemo launches started, found by the queue directory
/// in their environment.
///
/// A sender outlives its launch (that is its point), so it can outlive the test too: one still waiting for its
/// turn when the test removed its directory then opened its client, which creates the queue directory and its
/// parents, and left `<tmp>/cohorly-…/storage` behind; one still retrying sent to whatever collector listened on
/// that port next.
enum DetachedSenders {
    /// The processes sending a queue under `root`.
    static func running(under root: URL) -> [pid_t] {
        let prefix = Array("\(CrashEventSender.storageVariable)=\(root.path)/".utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry in
            guard let pid = pid_t(entry), pid != getpid() else { return nil }
            // A zombie, or a process gone meanwhile, has no environment left: it no longer runs.
            let variables = environment(of: entry).split(separator: 0)
            return variables.contains { $0.starts(with: prefix) } ? pid : nil
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

    /// `/proc/<pid>/environ` (NUL-separated `NAME=value`), empty when it cannot be read.
    private static func environment(of pid: String) -> [UInt8] {
        let descriptor = open("/proc/\(pid)/environ", O_RDONLY | O_CLOEXEC)
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
