import Cohorly
import CohorlyCollector
@testable import CohorlyCollectorCore
import CohorlyCompression
import CohorlyDigests
import Foundation
import TestWaiting
import Testing

/// The debug-file store over HTTP: uploads (plain and deflated), the missing-file check, the debuginfod reads
/// (also through `debuginfod-find` and gdb), and refused uploads leaving nothing behind.
@Suite struct DebugFileStoreTests {
    static let secret = "upload-secret"

    static func collector(data: URL? = nil) throws -> Collector {
        try startCollector {
            $0.adminToken = secret
            $0.dataDirectory = data
        }
    }

    /// `PUT /api/debug-files/<id>/<kind>` with the checksum headers; `deflate` compresses the body.
    static func upload(
        _ collector: Collector, _ bytes: [UInt8], buildId: String, kind: String, deflate: Bool = false,
        secret: String? = secret, sha256: String? = nil, size: Int? = nil, release: String = "prog@1.0"
    ) throws -> Reply {
        var headers: [(String, String)] = [
            ("X-Cohorly-Content-SHA256", sha256 ?? sha256Hex(bytes)),
            ("X-Cohorly-Content-Size", String(size ?? bytes.count)),
        ]
        if let secret { headers.append(("Authorization", "Bearer \(secret)")) }
        var body = bytes
        if deflate {
            headers.append(("Content-Encoding", "deflate"))
            body = try compress(bytes)
        }
        return sendBytes(
            collector, "/api/debug-files/\(buildId)/\(kind)?release=\(release)&name=prog", method: "PUT", body: body,
            headers: headers)
    }

    static func compress(_ bytes: [UInt8]) throws -> [UInt8] {
        let stream = try ZlibStream(.deflate(level: 6))
        var out: [UInt8] = []
        try bytes.withUnsafeBytes { try stream.process($0) { out += $0 } }
        try stream.finish { out += $0 }
        return out
    }

    static func get(_ collector: Collector, _ path: String) -> (status: Int, bytes: [UInt8]) {
        let url = URL(string: collector.baseURL.absoluteString + path) ?? collector.baseURL
        let request = TransportRequest(url: url, method: "GET", headers: [], body: [], timeout: 10, connectTimeout: 5)
        guard case .http(let status, _, let body) = CurlTransport().send(request) else { return (0, []) }
        return (status, body)
    }

    /// Stored objects and leftover temp files.
    static func files(_ collector: Collector) -> (objects: Int, temp: Int) {
        let root = collector.debugFiles.root
        let objects =
            FileManager.default.enumerator(atPath: root.appendingPathComponent("objects").path)?.allObjects.filter {
                ($0 as? String)?.count ?? 0 > 3
            }.count ?? 0
        let temp =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("tmp").path))?
            .count ?? 0
        return (objects, temp)
    }

    @Test func uploadsAreStoredAndServedOverDebuginfod() throws {
        let program = try SplitProgram.get()
        let collector = try Self.collector()
        let debug = contents(program.debug)
        let stripped = contents(program.stripped)
        let first = try Self.upload(collector, debug, buildId: program.buildId, kind: "debuginfo")
        #expect(first.status == 201, "\(first.text)")
        #expect(first.body?["sha256"]?.stringValue == sha256Hex(debug))
        let second = try Self.upload(collector, stripped, buildId: program.buildId, kind: "executable", deflate: true)
        #expect(second.status == 201, "\(second.text)")
        #expect((second.body?["bytes_received"]?.intValue ?? .max) < stripped.count)

        #expect(Self.get(collector, "/buildid/\(program.buildId)/debuginfo").bytes.digest == debug.digest)
        #expect(
            Self.get(collector, "/buildid/\(program.buildId.uppercased())/executable").bytes.digest == stripped.digest)
        #expect(Self.get(collector, "/buildid/\(String(repeating: "ab", count: 20))/debuginfo").status == 404)
        let missing = send(collector, "GET", "/buildid/\(String(repeating: "ab", count: 20))/debuginfo")
        #expect(missing.status == 404)
        #expect(missing.text.contains("no debuginfo for build id"))

        // The lead's lookup.
        let url = try #require(collector.debugFiles.debugFile(buildId: program.buildId, kind: .debuginfo))
        #expect(contents(url.path).digest == debug.digest)
        #expect(collector.debugFiles.debugFile(buildId: "00112233", kind: .executable) == nil)
        let listed = try collector.debugFiles.list()
        #expect(Set(listed.map(\.kind)) == [.debuginfo, .executable])
        #expect(listed.allSatisfy { $0.releases == ["prog@1.0"] && $0.fileName == "prog" })

        // A real debuginfod client gets the same bytes.
        let cache = SplitProgram.scratch("debuginfod-cache")
        let found = try SplitProgram.run(
            "/usr/bin/debuginfod-find", ["debuginfo", program.buildId],
            environment: ["DEBUGINFOD_URLS": collector.baseURL.absoluteString, "DEBUGINFOD_CACHE_PATH": cache])
        let path = found.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(contents(path).digest == debug.digest)
        let executable = try SplitProgram.run(
            "/usr/bin/debuginfod-find", ["executable", program.buildId],
            environment: ["DEBUGINFOD_URLS": collector.baseURL.absoluteString, "DEBUGINFOD_CACHE_PATH": cache])
        #expect(contents(executable.trimmingCharacters(in: .whitespacesAndNewlines)).digest == stripped.digest)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb"), "needs gdb"))
    func gdbResolvesAStrippedBinaryThroughTheCollector() throws {
        let program = try SplitProgram.get()
        let collector = try Self.collector()
        let debug = contents(program.debug)
        #expect(try Self.upload(collector, debug, buildId: program.buildId, kind: "debuginfo").status == 201)
        // Alone (no debug link target beside it), the stripped binary has no `compute`; gdb fetches the DWARF.
        let alone = SplitProgram.scratch("gdb")
        try FileManager.default.copyItem(atPath: program.stripped, toPath: alone + "/prog")
        let output = try SplitProgram.run(
            "/usr/bin/gdb",
            [
                "-nx", "-batch", "-iex", "set debuginfod enabled on", "-ex", "info line compute", alone + "/prog",
            ],
            environment: [
                "DEBUGINFOD_URLS": collector.baseURL.absoluteString,
                "DEBUGINFOD_CACHE_PATH": SplitProgram.scratch("gdb-cache"), "HOME": alone,
            ])
        #expect(output.contains("inline.c\" starts at address") && output.contains("<compute>"), "\(output)")
    }

    @Test func checkReportsMissingFilesAndAttachesReleases() throws {
        let program = try SplitProgram.get()
        let collector = try Self.collector()
        let debug = contents(program.debug)
        let full = contents(program.full)
        func check(_ files: [(String, String)], release: String) -> Reply {
            let list = files.map { #"{"build_id":"\#(program.buildId)","kind":"\#($0.0)","sha256":"\#($0.1)"}"# }
            return send(
                collector, "/api/debug-files/check",
                body: #"{"release":"\#(release)","files":[\#(list.joined(separator: ","))]}"#,
                headers: [("Authorization", "Bearer \(Self.secret)")])
        }
        let before = check([("debuginfo", sha256Hex(debug))], release: "r1")
        #expect(before.status == 200)
        #expect(before.body?["missing"]?.arrayValue?.count == 1)
        #expect(try Self.upload(collector, debug, buildId: program.buildId, kind: "debuginfo").status == 201)
        let after = check([("debuginfo", sha256Hex(debug)), ("executable", sha256Hex(full))], release: "r2")
        #expect(after.body?["present"]?.arrayValue?.count == 1)
        #expect(after.body?["missing"]?.arrayValue?.first?["kind"]?.stringValue == "executable")
        #expect(try collector.debugFiles.list().first?.releases == ["prog@1.0", "r2"])

        // The binary as executable; as debuginfo the build id already has other bytes (the split debug file):
        // a check never replaces them, so it reports the binary's debuginfo missing (and its upload gets 409).
        #expect(try Self.upload(collector, full, buildId: program.buildId, kind: "executable").status == 201)
        let other = check([("debuginfo", sha256Hex(full))], release: "r3")
        #expect(other.body?["missing"]?.arrayValue?.count == 1)
        #expect(Self.get(collector, "/buildid/\(program.buildId)/debuginfo").bytes.digest == debug.digest)
        // An unstripped binary is both: uploaded once as executable, the debuginfo check finds its content.
        let fresh = try Self.collector()
        #expect(try Self.upload(fresh, full, buildId: program.buildId, kind: "executable").status == 201)
        let both = send(
            fresh, "/api/debug-files/check",
            body:
                #"{"release":"r3","files":[{"build_id":"\#(program.buildId)","kind":"debuginfo","sha256":"\#(full.digest)"}]}"#,
            headers: [("Authorization", "Bearer \(Self.secret)")])
        #expect(both.body?["present"]?.arrayValue?.count == 1)
        #expect(Self.get(fresh, "/buildid/\(program.buildId)/debuginfo").bytes.digest == full.digest)

        #expect(check([("debuginfo", "zz")], release: "r").status == 400)
        // The hash names a file in the store: nothing but 64 hex digits is taken.
        let escape = String(repeating: "../", count: 19) + "bin/sh1"
        #expect(escape.count == 64)
        #expect(check([("executable", escape)], release: "r").status == 400)
        #expect(send(collector, "/api/debug-files/check", body: "{}", headers: []).status == 401)
    }

    @Test func badUploadsAreRefusedAndLeaveNothing() async throws {
        let program = try SplitProgram.get()
        let collector = try Self.collector()
        let debug = contents(program.debug)
        let id = program.buildId
        let cases: [(Reply, Int, String)] = [
            (
                try Self.upload(collector, Array("hello, not an ELF file".utf8), buildId: id, kind: "debuginfo"), 422,
                "not an ELF file"
            ),
            (
                try Self.upload(collector, debug, buildId: String(repeating: "ab", count: 20), kind: "debuginfo"), 422,
                "build id mismatch"
            ),
            (try Self.upload(collector, debug, buildId: id, kind: "executable"), 422, "without code"),
            (
                try Self.upload(
                    collector, Array(debug.prefix(debug.count / 2)), buildId: id, kind: "debuginfo",
                    size: debug.count), 400, "incomplete body"
            ),
            (
                try Self.upload(
                    collector, Array(debug.prefix(debug.count / 2)), buildId: id, kind: "debuginfo",
                    sha256: sha256Hex(debug), size: debug.count / 2), 400, "checksum mismatch"
            ),
            (try Self.upload(collector, debug, buildId: id, kind: "debuginfo", secret: "wrong"), 401, "credential"),
            (try Self.upload(collector, debug, buildId: id, kind: "debuginfo", secret: nil), 401, "credential"),
            (try Self.upload(collector, debug, buildId: id, kind: "sources"), 404, "unknown kind"),
            (try Self.upload(collector, debug, buildId: "xyz", kind: "debuginfo"), 404, "build id hex"),
        ]
        for (reply, status, message) in cases {
            #expect(reply.status == status, "\(reply.text)")
            #expect(reply.body?["error"]?.stringValue?.contains(message) == true, "\(reply.text)")
        }
        // A deflated body cut short: the compressed stream has no end.
        let compressed = try Self.compress(debug)
        let cut = sendBytes(
            collector, "/api/debug-files/\(id)/debuginfo", method: "PUT", body: Array(compressed.prefix(200)),
            headers: [("Authorization", "Bearer \(Self.secret)"), ("Content-Encoding", "deflate")])
        #expect(cut.status == 400)
        #expect(cut.body?["error"]?.stringValue?.contains("truncated") == true, "\(cut.text)")
        // The connection drops before Content-Length bytes arrived: no answer, nothing stored.
        try Self.sendAndHangUp(collector, path: "/api/debug-files/\(id)/debuginfo", declared: debug.count, sent: 512)
        // Six refused by their content, one abandoned by the hang-up (counted when libmicrohttpd drops it).
        // Nothing signals the effects of a peer's hang-up: polled.
        #expect(await eventually(timeout: 10) { collector.debugFiles.statistics.uploadsRefused == 7 })

        #expect(try collector.debugFiles.list().isEmpty)
        #expect(Self.files(collector).objects == 0)
        #expect(Self.files(collector).temp == 0)
        #expect(collector.debugFiles.debugFile(buildId: id, kind: .debuginfo) == nil)
        #expect(collector.debugFiles.statistics.uploadsStored == 0)
    }

    @Test func gzipBodiesAreInflatedToo() throws {
        let program = try SplitProgram.get()
        let collector = try Self.collector()
        let gzipped = try SplitProgram.run("/bin/sh", ["-c", "gzip -c < '\(program.debug)' | base64 -w0"])
        let body = try #require(Data(base64Encoded: gzipped))
        let debug = contents(program.debug)
        let reply = sendBytes(
            collector, "/api/debug-files/\(program.buildId)/debuginfo", method: "PUT", body: [UInt8](body),
            headers: [
                ("Authorization", "Bearer \(Self.secret)"), ("Content-Encoding", "gzip"),
                ("X-Cohorly-Content-SHA256", debug.digest),
            ])
        #expect(reply.status == 201, "\(reply.text)")
        #expect(Self.get(collector, "/buildid/\(program.buildId)/debuginfo").bytes.digest == debug.digest)
        let brotli = sendBytes(
            collector, "/api/debug-files/\(program.buildId)/debuginfo", method: "PUT", body: debug,
            headers: [("Authorization", "Bearer \(Self.secret)"), ("Content-Encoding", "br")])
        #expect(brotli.status == 415)
    }

    @Test func storedFilesSurviveARestart() throws {
        let program = try SplitProgram.get()
        let data = URL(fileURLWithPath: SplitProgram.scratch("data"))
        let debug = contents(program.debug)
        do {
            let collector = try Self.collector(data: data)
            #expect(try Self.upload(collector, debug, buildId: program.buildId, kind: "debuginfo").status == 201)
            collector.stop()
        }
        let reopened = try Self.collector(data: data)
        #expect(Self.get(reopened, "/buildid/\(program.buildId)/debuginfo").bytes.digest == debug.digest)
        let stored = try #require(reopened.debugFiles.debugFile(buildId: program.buildId, kind: .debuginfo))
        #expect(stored.path.hasPrefix(data.path + "/debug-files/objects/"))
        #expect(stored.lastPathComponent == sha256Hex(debug))
    }

    /// Sends headers declaring `declared` body bytes, then only `sent` bytes, then closes the socket.
    static func sendAndHangUp(_ collector: Collector, path: String, declared: Int, sent: Int) throws {
        let connection = try HeldConnectionTests.RawConnection(collector)
        let head =
            "PUT \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(secret)\r\nContent-Length: \(declared)\r\n\r\n"
        connection.write(Array(head.utf8) + [UInt8](repeating: 0x7f, count: sent))
    }
}

extension [UInt8] {
    /// SHA-256 hex, so a failed comparison prints two short strings.
    var digest: String { sha256Hex(self) }
}

/// SHA-256 of `bytes`, lowercase hex (empty when libcrypto is missing: every comparison then fails).
private func sha256Hex(_ bytes: [UInt8]) -> String { (try? Digest.hex(.sha256, bytes)) ?? "" }
