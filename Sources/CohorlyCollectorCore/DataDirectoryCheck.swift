import CohorlyFiles
import Foundation

/// `cohorly serve --data DIR` on a directory someone else may have prepared (`/tmp/cohorly`): before anything in
/// it is opened, the directory must belong to this user and not be group- or world-writable, and every file and
/// directory the collector opens in it must be this user's own and not a symbolic link. Otherwise another local
/// user could read everything the collector stores (a planted 0666 database receives every event: the admin
/// secret protects the HTTP API, not the file) or make it create files where they choose. This user's own files
/// with looser modes are narrowed to 0600; a subdirectory others may write to is refused like the directory.
enum DataDirectoryCheck {
    /// The directories the collector opens in its data directory.
    static let directories = ["debug-files", "debug-files/objects", "debug-files/tmp"]
    /// The files it opens (SQLite's companions included: SQLite opens them with the database's permissions).
    static let files = ["collector.lock"] + database("collector.sqlite") + database("debug-files/index.sqlite")

    private static func database(_ name: String) -> [String] { ["", "-wal", "-shm", "-journal"].map { name + $0 } }

    /// Creates `directory` (0700) when missing, else checks it and what the collector would open in it.
    static func verify(_ directory: URL) throws(CollectorError) {
        let root = directory.path
        do {
            try PrivateFiles.makeDirectory(root, requireOwnerOnly: true)
        } catch {
            throw .unsafeDataDirectory(
                directory: root, reason: "\(error.reason); use a directory of your own (--data DIR)")
        }
        for name in directories { try check(root, name, directory: true) }
        for name in files { try check(root, name, directory: false) }
    }

    private static func check(_ root: String, _ name: String, directory: Bool) throws(CollectorError) {
        let path = root + "/" + name
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // missing: created private when needed
        func refuse(_ reason: String) -> CollectorError { .unsafeDataDirectory(directory: root, reason: reason) }
        let type = info.st_mode & S_IFMT
        if type == S_IFLNK {
            throw refuse("\(path) is a symbolic link (the collector follows none there): remove it")
        }
        if info.st_uid != geteuid() {
            throw refuse(
                "\(path) belongs to another user (uid \(info.st_uid)) and may have been planted: remove it, or use "
                    + "a directory of your own (--data DIR)")
        }
        guard type == (directory ? S_IFDIR : S_IFREG) else {
            throw refuse("\(path) is not a \(directory ? "directory" : "regular file"): remove it")
        }
        let mode = info.st_mode & 0o777
        if directory, mode & 0o022 != 0 {
            throw refuse(
                "\(path) is group- or world-writable (mode \(String(mode, radix: 8))): others may have planted "
                    + "files in it; check it and make it private (chmod 700)")
        }
        if !directory, mode & 0o077 != 0 { chmod(path, 0o600) }
    }
}
