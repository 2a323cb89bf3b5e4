import Foundation
import Testing

/// `cohorly serve` run with umask 000 keeps its database (with -wal/-shm), its debug-file store and their
/// directories private: 0600 files, 0700 directories.
@Suite struct CollectorPrivateFilesTests {
    @Test func serveUnderUmask000WritesOnlyPrivateFiles() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let top = root.appendingPathComponent("new")
        let server = try await ServeCommandTests.Server(
            ["--data", top.appendingPathComponent("data").path, "--token", "t"], umask: "000")
        defer { server.stopSynchronously() }
        let body = #"[{"event":"e","properties":{"distinct_id":"u","$insert_id":"p-1","time":1700000000000}}]"#
        let headers = [("Content-Type", "application/json"), ("X-Cohorly-Token", "t")]
        #expect(server.send("POST", "/track", body: body, headers: headers) == 200)
        let upload = try await CLITests.run([
            "debug-files", "upload", "/bin/true", "--release", "r@1", "--host", server.host,
        ])
        #expect(upload.status == 0, "\(upload.error)")

        var files: [String] = []
        for entry in [""] + (FileManager.default.enumerator(atPath: top.path)?.allObjects as? [String] ?? []) {
            var info = stat()
            guard lstat(top.appendingPathComponent(entry).path, &info) == 0 else { continue }
            let isDirectory = info.st_mode & S_IFMT == S_IFDIR
            if !isDirectory { files.append(entry) }
            #expect(Int(info.st_mode & 0o7777) == (isDirectory ? 0o700 : 0o600), "\(entry)")
        }
        for name in ["collector.sqlite", "collector.sqlite-wal", "collector.sqlite-shm"] {
            #expect(files.contains("data/" + name), "\(files)")
        }
        #expect(files.contains { $0.contains("objects/") }, "\(files)")
    }
}
