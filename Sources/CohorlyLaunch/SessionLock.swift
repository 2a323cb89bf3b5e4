import Foundation

/// What tells a launch still running from one that ended, for a destination that keeps a session per launch
/// (Sentry's release health): each launch holds an exclusive `flock` on ``LaunchLock/session(_:)`` in the storage
/// directory, through a close-on-exec descriptor, from before its open session is committed until the session's end
/// is. The kernel drops the lock when the process dies (kill -9 too), so a later launch takes an open session for an
/// earlier launch's only when its lock is free — never the session of a launch started at the same moment. A forked
/// child holds the lock with its parent until it execs or exits.
package final class SessionLock: @unchecked Sendable {
    static let prefix = "sentry-"
    static let suffix = ".lock"

    private let path: String
    private let lock = NSLock()
    private var descriptor: Int32

    /// Creates and locks the file for session `sid` in `directory`; nil when it cannot (the session is then taken
    /// as ended by a launch that finds it).
    package init?(directory: URL, sid: String) {
        path = Self.path(directory, sid)
        let file = LockFile(.session(sid), in: directory.path)
        guard file.tryLock(), let fd = file.takeDescriptor() else { return nil }
        descriptor = fd
    }

    deinit { release() }

    /// The session ended (its end committed): removes the file and drops the lock.
    package func release() {
        lock.withLock {
            guard descriptor >= 0 else { return }
            unlink(path)
            close(descriptor)
            descriptor = -1
        }
    }

    /// Whether the launch of session `sid` still runs (holds its lock).
    package static func isHeld(directory: URL, sid: String) -> Bool {
        LockFile.isHeld(.session(sid), in: directory.path)
    }

    /// Removes the file of an ended launch's session `sid`.
    package static func remove(directory: URL, sid: String) {
        unlink(path(directory, sid))
    }

    /// Removes the files no launch needs: those of a launch killed after making its file and before committing
    /// its session (no open session names them). Kept: the sessions `keeping` names, a file held (its launch
    /// runs) and a file younger than `minimumAge` seconds (a launch may be between creating and locking it).
    package static func removeStray(
        directory: URL, keeping sids: Set<String>, minimumAge: Double = 60, now: Date = Date()
    ) {
        let kept = Set(sids.map { $0.lowercased() })
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            let sid = String(name.dropFirst(prefix.count).dropLast(suffix.count))
            guard !kept.contains(sid), path(directory, sid) == directory.appendingPathComponent(name).path else {
                continue
            }
            var info = stat()
            let file = path(directory, sid)
            guard lstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { continue }
            let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
            guard now.timeIntervalSince1970 - modified >= minimumAge, !isHeld(directory: directory, sid: sid) else {
                continue
            }
            unlink(file)
        }
    }

    private static func path(_ directory: URL, _ sid: String) -> String {
        directory.appendingPathComponent(LaunchLock.session(sid).fileName).path
    }
}
