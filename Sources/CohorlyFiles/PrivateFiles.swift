#if canImport(Glibc)
    import Glibc
#endif

/// Where user data is written — the client queue, the collector database and debug-file store, crash
/// reports — is private to the user who runs the process: directories 0700, files 0600, whatever the umask.
/// The modes are set explicitly after creation (a umask of 000 or 077 makes no difference). Foundation-free,
/// so the crash recorder's install path can use it cheaply.
public enum PrivateFiles {
    /// Why a directory or file could not be made private: `<path>: <reason>`.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// The directory or file.
        public let path: String
        /// What is wrong, in a few words.
        public let reason: String
        /// `<path>: <reason>`.
        public var description: String { "\(path): \(reason)" }
    }

    /// Creates the directory `path` and its missing parents; every directory it creates gets mode 0700.
    /// Existing directories are left as they are, except that with `requireOwnerOnly` the final one must
    /// belong to this user and must not be group- or world-writable (another user could otherwise swap,
    /// plant or remove the files in it).
    /// - Throws: ``Failure`` naming the directory that could not be created or is unsafe.
    public static func makeDirectory(_ path: String, requireOwnerOnly: Bool = false) throws(Failure) {
        var info = stat()
        // Usually it exists already (every launch but the first): one stat, no walk over the components.
        if stat(path, &info) != 0 || (info.st_mode & S_IFMT) != S_IFDIR {
            var prefix = path.hasPrefix("/") ? "" : "."
            for component in path.split(separator: "/") {
                prefix += "/" + component
                if mkdir(prefix, 0o700) == 0 {
                    chmod(prefix, 0o700)  // the umask may have taken bits away
                } else if errno != EEXIST {
                    throw Failure(path: prefix, reason: "cannot create: \(String(cString: strerror(errno)))")
                }
            }
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
                throw Failure(path: path, reason: "not a directory")
            }
        }
        if requireOwnerOnly, let problem = ownerOnlyProblem(info) { throw Failure(path: path, reason: problem) }
    }

    /// Why a directory with these attributes is unsafe for private files (owned by another user, group- or
    /// world-writable), or nil when it is fine.
    public static func ownerOnlyProblem(_ info: stat) -> String? {
        if info.st_uid != geteuid() { return "owned by another user (uid \(info.st_uid))" }
        if info.st_mode & 0o022 != 0 {
            let mode = String(info.st_mode & 0o7777, radix: 8)
            return "group- or world-writable (mode \(mode)); make it private with chmod 700"
        }
        return nil
    }

    /// Makes sure the file `path` exists with mode 0600 before a library that creates files with its own mode
    /// (SQLite: 0644) opens it: a missing file is created 0600; an existing regular file of this user is
    /// narrowed to 0600. SQLite gives its `-wal`, `-shm` and `-journal` files the mode of the database file,
    /// so they are 0600 too. Symlinks are not followed when creating.
    /// - Throws: ``Failure`` when the path cannot be created or is not a regular file.
    public static func prepareFile(_ path: String) throws(Failure) {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw Failure(path: path, reason: "cannot create: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw Failure(path: path, reason: "not a regular file")
        }
        if info.st_uid == geteuid() && info.st_mode & 0o777 != 0o600 { fchmod(fd, 0o600) }
    }
}
