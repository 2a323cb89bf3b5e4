import CohorlyFiles
import CohorlyLaunch

#if canImport(Glibc)
    import Glibc
#endif

/// The report directory opened once, every access relative to its descriptor (`openat`, `fstatat`,
/// `renameat`, `unlinkat`, never following a symlink), so nothing outside it is read, written or removed,
/// whatever names are planted in it. Only regular files of this user are read, moved or removed; a
/// directory, symlink, FIFO or another user's file is left alone.
final class ReportDirectory {
    let descriptor: Int32

    /// Opens `path`; nil when it is missing or unsafe (another user's, or group- or world-writable: its
    /// files could have been planted or swapped by someone else).
    convenience init?(path: String) {
        self.init(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC))
    }

    /// The subdirectory `name` of `parent`, which must be private too (created 0700 when `create`).
    convenience init?(subdirectory name: String, of parent: ReportDirectory, create: Bool) {
        if create && mkdirat(parent.descriptor, name, 0o700) == 0 { fchmodat(parent.descriptor, name, 0o700, 0) }
        self.init(openat(parent.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))
    }

    private init?(_ fd: Int32) {
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, PrivateFiles.ownerOnlyProblem(info) == nil else {
            close(fd)
            return nil
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// The names of the entries, sorted.
    func names() -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0 else { return [] }
        guard let stream = fdopendir(copy) else {
            close(copy)
            return []
        }
        defer { closedir(stream) }
        rewinddir(stream)  // the duplicate shares the position of earlier listings
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The attributes of `name` when it is a regular file of this user (a symlink is not followed), else nil.
    func ownedRegularFile(_ name: String) -> stat? {
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG,
            info.st_uid == geteuid()
        else { return nil }
        return info
    }

    /// Why a read failed.
    enum ReadFailure: Error {
        case unreadable(String)
        case tooLarge
    }

    /// The bytes of the regular file `name` of this user, at most `limit` of them: a larger file fails with
    /// `.tooLarge` without being read (checked from its size, and again while reading in case it grows).
    func read(_ name: String, limit: Int) -> Result<[UInt8], ReadFailure> {
        let fd = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(.unreadable(String(cString: strerror(errno)))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else {
            return .failure(.unreadable("not a regular file of this user"))
        }
        guard info.st_size <= limit else { return .failure(.tooLarge) }
        var bytes = [UInt8](repeating: 0, count: max(0, limit) + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(fd, buffer.baseAddress.map { $0 + count }, buffer.count - count, off_t(count))
            }
            if got < 0 && errno == EINTR { continue }
            if got < 0 { return .failure(.unreadable(String(cString: strerror(errno)))) }
            if got == 0 { break }
            count += got
        }
        guard count <= limit else { return .failure(.tooLarge) }
        bytes.removeSubrange(count...)
        return .success(bytes)
    }

    /// Writes `bytes` to `name` with mode 0600: a new file when `exclusive`, else a new file or a regular
    /// file of this user rewritten. A symlink is never followed. Returns whether it worked.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8], exclusive: Bool) -> Bool {
        var existing = stat()
        if fstatat(descriptor, name, &existing, AT_SYMLINK_NOFOLLOW) == 0 && ownedRegularFile(name) == nil {
            return false
        }
        let flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC)
        let fd = openat(descriptor, name, flags, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        fchmod(fd, 0o600)
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.write(fd, buffer.baseAddress.map { $0 + written }, buffer.count - written)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }

    /// Removes `name` when it is a regular file of this user. Returns whether it did.
    @discardableResult
    func remove(_ name: String) -> Bool {
        ownedRegularFile(name) != nil && unlinkat(descriptor, name, 0) == 0
    }

    /// Moves the regular file `name` of this user to `target` in `directory`. Returns whether it did.
    @discardableResult
    func move(_ name: String, to directory: ReportDirectory, as target: String) -> Bool {
        ownedRegularFile(name) != nil && renameat(descriptor, name, directory.descriptor, target) == 0
    }

    /// Runs `body` holding ``LaunchLock/reportDirectory`` (`.lock`): tidying is serialized between the processes
    /// that share the directory. A lock file that cannot be made (a read-only directory) does not stop the tidying.
    func withLock<T>(_ body: () -> T) -> T {
        let lock = LockFile(.reportDirectory, inDirectory: descriptor)
        defer { lock.close() }
        _ = lock.lockWaiting()
        return body()
    }
}
