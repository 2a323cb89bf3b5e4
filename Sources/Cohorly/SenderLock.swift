import CohorlyFiles
import Foundation

/// An exclusive advisory lock (`flock`) on `queue.lock` beside the queue, held while a client drains it: only one
/// client, in any process, sends a given queue at a time. So a relaunched app and a detached sender process (or
/// two clients on one directory) never send the same records twice. The kernel releases it when a process dies.
/// Used only by the delivery thread.
final class SenderLock: @unchecked Sendable {
    private let path: String?
    private var descriptor: Int32 = -1

    /// A lock on `path`; nil (an in-memory queue) never contends.
    init(path: String?) { self.path = path }

    deinit {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)  // a child forked at this moment holds the open file until it execs
        close(descriptor)
    }

    /// True when this client may send now. A lock file that cannot be opened does not block sending.
    func tryAcquire() -> Bool {
        guard let path else { return true }
        if descriptor < 0 {
            // Never through a symbolic link, never another user's file (PrivateFiles.openPrivate).
            guard let fd = try? PrivateFiles.openPrivate(path, O_RDWR) else { return true }
            descriptor = fd
        }
        return flock(descriptor, LOCK_EX | LOCK_NB) == 0
    }

    /// Lets other clients send.
    func release() {
        if descriptor >= 0 { flock(descriptor, LOCK_UN) }
    }
}
