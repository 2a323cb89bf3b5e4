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
