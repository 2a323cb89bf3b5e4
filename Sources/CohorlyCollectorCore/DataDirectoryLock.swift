import Foundation

/// An exclusive lock on a collector's data directory (`<data>/collector.lock`, holding the owner's pid), held for
/// the collector's life (until `release`): a second collector on the same directory is refused with a message
/// naming the first, instead of two servers sharing one database and one debug-file store.
final class DataDirectoryLock: @unchecked Sendable {
    private let lock = NSLock()
    private var fd: Int32

    /// Takes the lock (not waiting); throws `CollectorError.dataDirectoryInUse` when another collector holds it.
    init(directory: URL) throws {
        let path = directory.appendingPathComponent("collector.lock").path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw CollectorError.dataDirectoryInUse(
                directory: directory.path, reason: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            var bytes = [UInt8](repeating: 0, count: 32)
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            close(fd)
            let pid =
                count > 0
                ? String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "?"
            throw CollectorError.dataDirectoryInUse(
                directory: directory.path, reason: "another collector (pid \(pid)) is using it")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        self.fd = fd
    }

    deinit { release() }

    /// Lets another collector take the directory. Safe to call twice. Unlocks before closing: the lock belongs to
    /// the open file, which a child forked by another thread at that moment also holds until it execs (then a
    /// close alone left the directory locked, and a collector started right after was refused).
    func release() {
        lock.withLock {
            if fd >= 0 {
                _ = flock(fd, LOCK_UN)
                close(fd)
            }
            fd = -1
        }
    }
}
