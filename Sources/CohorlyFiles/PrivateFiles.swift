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
    /// A file of another user is refused (it may have been planted to read what is written to it).
    public static func prepareFile(_ path: String) throws(Failure) {
        close(try openPrivate(path, O_RDWR))
    }

    /// Opens (creating 0600) the file `path` with `flags` (`O_RDWR`, …) never following a symbolic link, and checks
    /// what was opened: a regular file of this user (narrowed to 0600 whatever its mode was). Returns the
    /// descriptor (close-on-exec), which the caller closes.
    /// - Throws: ``Failure`` for a symbolic link, another user's file, or anything but a regular file.
    public static func openPrivate(_ path: String, _ flags: Int32) throws(Failure) -> Int32 {
        let fd = open(path, flags | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == ELOOP { throw Failure(path: path, reason: "a symbolic link (never followed here): remove it") }
            throw Failure(path: path, reason: "cannot create: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw Failure(path: path, reason: "not a regular file")
        }
        guard info.st_uid == geteuid() else {
            close(fd)
            throw Failure(
                path: path, reason: "owned by another user (uid \(info.st_uid)) and may have been planted: remove it")
        }
        if info.st_mode & 0o777 != 0o600 { fchmod(fd, 0o600) }
        return fd
    }

    /// Prepares an SQLite database file (``prepareFile(_:)``) and checks the companions SQLite opens beside it
    /// with the database's permissions (`-wal`, `-shm`, `-journal`): one that exists must be a regular file of
    /// this user, not a symbolic link (another user's would receive what is written), and is narrowed to 0600.
    /// - Throws: ``Failure`` naming the file that is unsafe.
    public static func prepareDatabase(_ path: String) throws(Failure) {
        try prepareFile(path)
        for suffix in ["-wal", "-shm", "-journal"] {
            let companion = path + suffix
            var info = stat()
            guard lstat(companion, &info) == 0 else { continue }
            close(try openPrivate(companion, O_RDWR))
        }
    }
}
