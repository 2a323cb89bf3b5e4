import Cohorly
import CohorlyCompression
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlySentryIngestion

/// The collector's Sentry chunk-upload routes (SentryChunkRoutes.swift) driven by hand: chunks checked against
/// their SHA-1 names, the assembled file checked against its checksum and as an ELF debug file, missing chunks
/// named. (sentry-cli itself: SentryCLIUploadTests.)
@Suite struct SentryChunkUploadTests {
    static let secret = "chunk-secret"
    static let chunkPath = "api/0/organizations/o/chunk-upload/"
    static let assemblePath = "api/0/projects/o/p/files/difs/assemble/"

    final class Server {
        let collector: Collector
        init() throws {
            var configuration = CollectorConfiguration()
            configuration.adminToken = SentryChunkUploadTests.secret
            collector = try Collector(configuration: configuration)
            try collector.start()
        }

        func send(_ method: String, _ path: String, _ body: [UInt8], type: String, token: String = secret)
            -> (Int, CohorlyValue?)
        {
            let request = TransportRequest(
                url: collector.baseURL.appendingPathComponent(path), method: method,
                headers: [("Authorization", "Bearer \(token)"), ("Content-Type", type)], body: body, timeout: 30,
                connectTimeout: 5)
            guard case .http(let status, _, let answer) = CurlTransport().send(request) else { return (0, nil) }
            return (status, CohorlyValue(bytes: answer))
        }

        /// Posts `parts` (name, bytes, gzip) as one multipart chunk request.
        func chunks(_ parts: [(name: String, bytes: [UInt8], gzip: Bool)], token: String = secret) -> (
            Int, CohorlyValue?
        ) {
            let boundary = "----cohorly-test-boundary"
            var body: [UInt8] = []
            for part in parts {
                let field = part.gzip ? "file_gzip" : "file"
                body += Array(
                    "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(part.name)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                        .utf8)
                body += part.gzip ? (Gzip.compress(part.bytes) ?? []) : part.bytes
                body += Array("\r\n".utf8)
            }
            body += Array("--\(boundary)--\r\n".utf8)
            return send("POST", chunkPath, body, type: "multipart/form-data; boundary=\(boundary)", token: token)
        }

        func assemble(_ checksum: String, _ chunks: [String]) -> CohorlyValue? {
            let body: CohorlyValue = [
                checksum: ["name": "prog.debug", "chunks": .array(chunks.map(CohorlyValue.string))]
            ]
            return send("POST", assemblePath, Array(body.jsonString.utf8), type: "application/json").1?[checksum]
        }
    }

    @Test func chunksAreCheckedAndAFileIsAssembledVerifiedAndStored() throws {
        let program = try SplitProgram.get()
        let server = try Server()
        defer { server.collector.stop() }
        let options = server.send("GET", Self.chunkPath, [], type: "application/json")
        #expect(options.0 == 200)
        #expect(options.1?["hashAlgorithm"] == "sha1")
        #expect(options.1?["url"]?.stringValue?.hasSuffix("/" + Self.chunkPath) == true)

        let file = contents(program.debug)
        let half = file.count / 2
        let pieces = [Array(file[..<half]), Array(file[half...])]
        let names = pieces.map(SentryMock.sha1)
        let checksum = SentryMock.sha1(file)
        // Unknown chunks are named as missing.
        #expect(server.assemble(checksum, names)?["state"] == "not_found")
        #expect(server.assemble(checksum, names)?["missingChunks"] == .array(names.map(CohorlyValue.string)))
        // A wrong token, or a chunk whose bytes are not its name, stores nothing.
        #expect(server.chunks([(names[0], pieces[0], false)], token: "wrong").0 == 401)
        let mismatch = server.chunks([(names[0], pieces[1], false)])
        #expect(mismatch.0 == 400)
        #expect(mismatch.1?["detail"]?.stringValue?.hasPrefix("Checksum mismatch") == true)
        #expect(server.assemble(checksum, names)?["missingChunks"] == .array(names.map(CohorlyValue.string)))
        // One plain chunk, one gzipped, in one request.
        #expect(server.chunks([(names[0], pieces[0], false), (names[1], pieces[1], true)]).0 == 200)
        // Joined in the wrong order, the whole file's SHA-1 does not match: refused, nothing stored.
        let swapped = server.assemble(checksum, names.reversed())
        #expect(swapped?["state"] == "error")
        #expect(swapped?["detail"]?.stringValue?.contains("checksum mismatch") == true)
        #expect(try server.collector.debugFiles.list().isEmpty)
        #expect(server.assemble(checksum, names)?["state"] == "ok")
        let stored = try server.collector.debugFiles.list()
        #expect(stored.map(\.kind) == [.debuginfo])
        #expect(stored.first?.buildId == program.buildId)
        #expect(server.collector.debugFiles.debugFile(buildId: program.buildId, kind: .debuginfo) != nil)
    }

    @Test func aFileThatIsNotAnELFDebugFileIsAnError() throws {
        let server = try Server()
        defer { server.collector.stop() }
        let bytes = Array("not an ELF file at all".utf8)
        let name = SentryMock.sha1(bytes)
        #expect(server.chunks([(name, bytes, false)]).0 == 200)
        let answer = server.assemble(name, [name])
        #expect(answer?["state"] == "error")
        #expect(answer?["detail"]?.stringValue?.contains("ELF") == true, "\(String(describing: answer))")
        #expect(try server.collector.debugFiles.list().isEmpty)
    }

    @Test func aMalformedChunkRequestIsRefused() throws {
        let server = try Server()
        defer { server.collector.stop() }
        #expect(server.send("POST", Self.chunkPath, Array("x".utf8), type: "application/json").0 == 400)
        let cut = Array(
            "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(String(repeating: "a", count: 40))\"\r\n\r\nabc"
                .utf8)
        #expect(server.send("POST", Self.chunkPath, cut, type: "multipart/form-data; boundary=b").0 == 400)
        let other = Array("--b\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nabc\r\n--b--\r\n".utf8)
        #expect(server.send("POST", Self.chunkPath, other, type: "multipart/form-data; boundary=b").0 == 400)
    }
}
