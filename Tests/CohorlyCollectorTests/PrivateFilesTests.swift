import Cohorly
import Foundation
import Testing

/// `cohorly serve` run with umask 000 keeps its database (with -wal/-shm), its debug-file store and their
/// directories private: 0600 files, 0700 directories.
@Suite struct CollectorPrivateFilesTests {
    @Test func serveUnderUmask000WritesOnlyPrivateFiles() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("new/data")
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/bin/sh")
        server.arguments = [
            "-c", "umask 000 && exec \"$0\" \"$@\"", CLITests.cli.path, "serve", "--port", "0", "--data", data.path,
            "--token", "t",
        ]
        let pipe = Pipe()
        server.standardOutput = pipe
        try server.run()
        defer {
            kill(server.processIdentifier, SIGTERM)
            server.waitUntilExit()
        }
        var firstLine = ""
        while !firstLine.contains("\n") {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            firstLine += String(decoding: chunk, as: UTF8.self)
        }
        let host = try #require(
            firstLine.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init))
        let body = #"[{"event":"e","properties":{"distinct_id":"u","$insert_id":"p-1","time":1700000000000}}]"#
        let request = TransportRequest(
            url: try #require(URL(string: host + "/track")),
            headers: [("Content-Type", "application/json"), ("X-Cohorly-Token", "t")], body: Array(body.utf8),
            timeout: 5, connectTimeout: 5)
        guard case .http(200, _, _) = CurlTransport().send(request) else {
            Issue.record("ingestion failed")
            return
        }
        let upload = try CLITests.run(["debug-files", "upload", "/bin/true", "--release", "r@1", "--host", host])
        #expect(upload.status == 0, "\(upload.error)")

        var files: [String] = []
        for entry in FileManager.default.enumerator(atPath: root.appendingPathComponent("new").path)?.allObjects
            as? [String] ?? [""]
        {
            let path = root.appendingPathComponent("new").appendingPathComponent(entry).path
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let isDirectory = info.st_mode & S_IFMT == S_IFDIR
            if !isDirectory { files.append(entry) }
            #expect(Int(info.st_mode & 0o7777) == (isDirectory ? 0o700 : 0o600), "\(entry)")
        }
        var info = stat()
        #expect(stat(root.appendingPathComponent("new").path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        for name in ["collector.sqlite", "collector.sqlite-wal", "collector.sqlite-shm"] {
            #expect(files.contains("data/" + name), "\(files)")
        }
        #expect(files.contains { $0.contains("objects/") }, "\(files)")
    }
}
