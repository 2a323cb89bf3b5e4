import CohorlyFiles
import CohorlySQLite
import Foundation
import Testing

/// ``PrivateFiles`` in this process (its umask is left alone: the umask 000 cases run in child processes,
/// see CohorlyCrashTests and CohorlyCollectorTests).
@Suite struct PrivateFilesTests {
    static func scratch(_ label: String) throws -> String {
        let path = NSTemporaryDirectory() + "cohorly-files-\(label)-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        return path
    }

    static func mode(_ path: String) -> Int {
        var info = stat()
        return lstat(path, &info) == 0 ? Int(info.st_mode & 0o7777) : -1
    }

    @Test func directoriesAreCreated0700WithTheirParents() throws {
        let root = try Self.scratch("dirs")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try PrivateFiles.makeDirectory(root + "/a/b/c")
        for path in ["/a", "/a/b", "/a/b/c"] { #expect(Self.mode(root + path) == 0o700, "\(path)") }
        // Existing directories are accepted as they are, unless owner-only is required.
        chmod(root + "/a/b/c", 0o777)
        try PrivateFiles.makeDirectory(root + "/a/b/c")
        #expect(throws: PrivateFiles.Failure.self) {
            try PrivateFiles.makeDirectory(root + "/a/b/c", requireOwnerOnly: true)
        }
        chmod(root + "/a/b/c", 0o755)
        try PrivateFiles.makeDirectory(root + "/a/b/c", requireOwnerOnly: true)
        // A file in the way is named.
        _ = FileManager.default.createFile(atPath: root + "/file", contents: nil)
        do {
            try PrivateFiles.makeDirectory(root + "/file")
            Issue.record("a file was taken for a directory")
        } catch {
            #expect(error.description == root + "/file: not a directory")
        }
    }

    @Test func preparedFilesAre0600AndSymlinksAreNotFollowed() throws {
        let root = try Self.scratch("files")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try PrivateFiles.prepareFile(root + "/new")
        #expect(Self.mode(root + "/new") == 0o600)
        _ = FileManager.default.createFile(atPath: root + "/old", contents: Data("x".utf8))
        chmod(root + "/old", 0o666)
        try PrivateFiles.prepareFile(root + "/old")
        #expect(Self.mode(root + "/old") == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/old")) == Data("x".utf8))
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: root + "/target")
        #expect(throws: PrivateFiles.Failure.self) { try PrivateFiles.prepareFile(root + "/link") }
        #expect(!FileManager.default.fileExists(atPath: root + "/target"))
    }

    /// SQLite creates its rollback journal with the database file's mode: 0600, not its default 0644.
    @Test func theSQLiteJournalIsPrivateToo() throws {
        let root = try Self.scratch("journal")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let db = try SQLiteDatabase(path: root + "/db.sqlite")
        try db.execute("PRAGMA journal_mode=DELETE; CREATE TABLE t(x); BEGIN; INSERT INTO t VALUES(1);")
        #expect(Self.mode(root + "/db.sqlite") == 0o600)
        #expect(Self.mode(root + "/db.sqlite-journal") == 0o600)
        try db.execute("COMMIT")
    }
}

/// Another user on the same machine (issue 26): a file or symbolic link planted where the client or the collector
/// keeps its data is refused, never used. The tests run as root: "another user" is uid 65534 (nobody) by chown.
@Suite struct PlantedFileTests {
    static let other: uid_t = 65534

    @Test func anotherUsersFileIsRefusedAndLeftAlone() throws {
        let root = try PrivateFilesTests.scratch("planted")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let planted = root + "/queue.sqlite"
        #expect(FileManager.default.createFile(atPath: planted, contents: nil))
        #expect(chmod(planted, 0o666) == 0 && chown(planted, Self.other, Self.other) == 0)
        #expect(throws: PrivateFiles.Failure.self) { try PrivateFiles.prepareFile(planted) }
        #expect(PrivateFilesTests.mode(planted) == 0o666)
        #expect(throws: (any Error).self) { _ = try SQLiteDatabase(path: planted) }
    }

    @Test func aSymbolicLinkIsNeverFollowed() throws {
        let root = try PrivateFilesTests.scratch("link")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let target = root + "/chosen-by-them"
        #expect(symlink(target, root + "/queue.lock") == 0)
        #expect(throws: PrivateFiles.Failure.self) { _ = try PrivateFiles.openPrivate(root + "/queue.lock", O_RDWR) }
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func aPlantedCompanionOfTheDatabaseIsRefusedAndOwnOnesAreNarrowed() throws {
        let root = try PrivateFilesTests.scratch("wal")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let database = root + "/queue.sqlite"
        #expect(FileManager.default.createFile(atPath: database + "-wal", contents: nil))
        #expect(chown(database + "-wal", Self.other, Self.other) == 0)
        let failure = #expect(throws: PrivateFiles.Failure.self) { try PrivateFiles.prepareDatabase(database) }
        #expect(failure?.path == database + "-wal")
        #expect(unlink(database + "-wal") == 0)
        #expect(FileManager.default.createFile(atPath: database + "-shm", contents: nil))
        #expect(chmod(database + "-shm", 0o666) == 0)
        try PrivateFiles.prepareDatabase(database)
        #expect(PrivateFilesTests.mode(database + "-shm") == 0o600)
        #expect(PrivateFilesTests.mode(database) == 0o600)
    }
}
