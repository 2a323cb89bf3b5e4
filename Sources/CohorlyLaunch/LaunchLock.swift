import CohorlyFiles

#if canImport(Glibc)
    import Glibc
#endif

/// The lock files of the launch protocol (see ``LaunchProtocol``): each is an exclusive `flock` on a file of its
/// own, which the kernel drops when its holder dies (kill -9 too), so a lock left by a killed process never blocks.
/// Every lock file of the protocol is named here and opened only by ``LockFile``.
package struct LaunchLock: Sendable, Equatable {
    /// The file's name in its directory.
    package let fileName: String

    /// `queue.lock` beside a persisted queue: held by the client (in the app or a sender) draining the queue, for
    /// one drain, so no two processes ever send one record at once.
    package static let queue = LaunchLock(fileName: "queue.lock")
    /// `crash-sender.lock` beside the queue: held by a detached sender for its whole run, so the senders of one
    /// queue take turns (a crash loop starts one per launch).
    package static let crashSender = LaunchLock(fileName: "crash-sender.lock")
    /// `crash-delivery.lock` beside the queue: held by whoever turns reports into events (a launch while it does,
    /// or a sender taking over a dead launch's reports), so each report becomes one queued event.
    package static let crashDelivery = LaunchLock(fileName: "crash-delivery.lock")
    /// `.lock` in the report directory: held while a process tidies the directory (salvage, quarantine, markers).
    package static let reportDirectory = LaunchLock(fileName: ".lock")

    /// `sentry-<sid>.lock` beside the queue: held by a launch from before its session is committed until the
    /// session's end is (see ``SessionLock``). Characters other than hex digits and `-` are kept out of the name.
    package static func session(_ sid: String) -> LaunchLock {
        let safe = String(
            sid.lowercased().unicodeScalars.filter { ("0"..."9").contains($0) || ("a"..."f").contains($0) || $0 == "-" }
        )
        return LaunchLock(fileName: SessionLock.prefix + safe + SessionLock.suffix)
    }
}

/// One process's handle on a ``LaunchLock``: the file is opened (created 0600, close-on-exec, never through a
/// symbolic link, never another user's file) on first use, and closed when the handle goes.
package final class LockFile: @unchecked Sendable {  // one owner at a time: the thread that made it
    /// Where the file is: a path, or a name relative to a directory descriptor (the report directory's).
    private enum Location {
        case path(String)
        case directory(Int32, String)
    }

    private let location: Location
    private var descriptor: Int32 = -1

    /// The lock `lock` in the directory at `directory` (a path).
    package init(_ lock: LaunchLock, in directory: String) {
        location = .path(directory + "/" + lock.fileName)
    }

    /// The lock `lock` in the directory open at `directoryDescriptor` (which must outlive the handle).
    package init(_ lock: LaunchLock, inDirectory directoryDescriptor: Int32) {
        location = .directory(directoryDescriptor, lock.fileName)
    }

    deinit { close() }

    /// Opens the file if it is not open yet. Returns whether it is open.
    package func open() -> Bool {
        if descriptor >= 0 { return true }
        switch location {
        case .path(let path):
            descriptor = (try? PrivateFiles.openPrivate(path, O_RDWR)) ?? -1
        case .directory(let directory, let name):
            descriptor = openat(directory, name, O_CREAT | O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        }
        return descriptor >= 0
    }

    /// Takes the lock if it is free now. False when another process holds it or the file cannot be opened.
    package func tryLock() -> Bool {
        open() && flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    /// Takes the lock, waiting while another process holds it, at most until `deadline` (checked every 20 ms).
    /// False when the deadline passed or the file cannot be opened.
    package func lock(until deadline: ContinuousClock.Instant) -> Bool {
        guard open() else { return false }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else { return false }
            usleep(20_000)
        }
        return true
    }

    /// Takes the lock, waiting as long as another process holds it (each holder is bounded: a launch by its work,
    /// a sender by its watchdog). A signal does not cut the wait short. False when the file cannot be opened.
    package func lockWaiting() -> Bool {
        guard open() else { return false }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { return false }
        }
        return true
    }

    /// Lets go of the lock (the file stays open for the next turn).
    package func unlock() {
        if descriptor >= 0 { flock(descriptor, LOCK_UN) }
    }

    /// Hands the open descriptor over to the caller, who closes it (and with it the lock); nil when not open.
    package func takeDescriptor() -> Int32? {
        guard descriptor >= 0 else { return nil }
        defer { descriptor = -1 }
        return descriptor
    }

    /// Whether a process holds `lock` in the directory at `directory` now (the file is never created here).
    package static func isHeld(_ lock: LaunchLock, in directory: String) -> Bool {
        let fd = Glibc.open(directory + "/" + lock.fileName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        return flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK
    }

    /// Lets go of the lock and closes the file.
    package func close() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)  // a child forked at this moment holds the open file until it execs
        Glibc.close(descriptor)
        descriptor = -1
    }
}

/// The files of the protocol that are held by the process they describe — a launch marker, a hang file, a marker
/// being made — through an `flock` on the file itself: held, its process lives; free, it died (or ended without
/// removing it). These are the only `flock` calls on them.
package enum HeldFile {
    /// Claims the open file `fd` for this process (exclusive, without waiting). False when another holds it.
    package static func claim(_ fd: Int32) -> Bool {
        flock(fd, LOCK_EX | LOCK_NB) == 0
    }

    /// Whether no process holds the open file `fd` now (a shared lock is taken without waiting and kept until the
    /// descriptor closes, so the holder cannot come back meanwhile).
    package static func isFree(_ fd: Int32) -> Bool {
        flock(fd, LOCK_SH | LOCK_NB) == 0
    }
}
