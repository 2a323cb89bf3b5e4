import Foundation
import Testing

/// Reports, the client queue (SQLite with its -wal/-shm files) and the directories holding them are private
/// (0600 files, 0700 directories) even when the process runs with umask 000.
@Suite("Private files under umask 000")
struct PrivateFilesTests {
    /// Every directory and file under `root` with its permission bits (symlinks not followed).
    static func modes(under root: URL) throws -> [String: Int] {
        var result: [String: Int] = [:]
        var info = stat()
        guard lstat(root.path, &info) == 0 else { return result }
        result[root.path] = Int(info.st_mode & 0o7777)
        for entry in FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? [] {
            let path = root.appendingPathComponent(entry).path
            guard lstat(path, &info) == 0 else { continue }
            result[path] = Int(info.st_mode & 0o7777)
        }
        return result
    }

    @Test func aCrashingAppWithAClientLeavesOnlyPrivateFiles() async throws {
        let root = try makeTemporaryDirectory("umask")
        defer { removeLaunchDirectory(root) }
        let reports = root.appendingPathComponent("state/cohorly/crashes")
        let storage = root.appendingPathComponent("data/cohorly")
        let run = try await runCrashDemo(
            ["crash", "fatal-error", "--storage", storage.path], reportDirectory: reports, label: "umask",
            withClient: true, environment: ["COHORLY_HOST": "http://127.0.0.1:9"], umask: "000")
        #expect(run.signal != nil, "\(run.stderr)")
        var files = 0
        for top in [root.appendingPathComponent("state"), root.appendingPathComponent("data")] {
            for (path, mode) in try Self.modes(under: top) {
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                #expect(mode == (isDirectory.boolValue ? 0o700 : 0o600), "\(path): \(String(mode, radix: 8))")
                if !isDirectory.boolValue { files += 1 }
            }
        }
        let stored = try FileManager.default.contentsOfDirectory(atPath: storage.path)
        for name in ["queue.sqlite", "queue.sqlite-wal", "queue.sqlite-shm"] {
            #expect(stored.contains(name), "\(stored)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: reports.path).contains { $0.hasSuffix(".json") })
        #expect(files >= 4)
    }
}
