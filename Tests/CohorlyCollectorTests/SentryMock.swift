import CCrypto
import Cohorly
import CohorlyCompression
import Foundation

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Sentry's debug-file chunk-upload API on 127.0.0.1 (the collector's libmicrohttpd server), written from
/// Sentry's chunk-upload protocol (docs/collector.md "Sentry's chunk upload (sentry-cli)"):
/// `GET /api/0/organizations/{org}/chunk-upload/` answers the options;
/// `POST /chunks/` takes a multipart form parsed strictly (every part `file` or `file_gzip` with the chunk's
/// SHA-1 as its file name, checked against the bytes, each within `chunkSize`, at most `chunksPerRequest` parts
/// and `maxRequestSize` bytes); `POST /api/0/projects/{org}/{project}/files/difs/assemble/` answers each file
/// `not_found` with its `missingChunks`, then `created` / `assembling` for `pollsUntilOK` calls, then checks the
/// joined chunks against the file's checksum and answers `ok` (or `error` with a detail). Every request must
/// carry `Authorization: Bearer <token>`. It records what it saw and every protocol violation.
final class SentryMock: @unchecked Sendable {
    static let org = "acme"
    static let project = "app"
    let token: String
    private(set) var port: UInt16 = 0
    private var server: HTTPServer?
    private let lock = NSLock()
    private var state = State()

    struct State {
        var chunkSize = 8 << 20
        var chunksPerRequest = 64
        var maxRequestSize = 32 << 20
        var maxFileSize: Int64 = 2 << 30
        var compression: [String] = ["gzip"]
        /// Assemble calls answered `created`/`assembling` once all chunks are there, before `ok`.
        var pollsUntilOK = 1
        /// Never leave `assembling`.
        var neverFinish = false
        /// Answer `error` with this detail instead of `ok`.
        var errorDetail: String?
        /// Chunks held, by SHA-1.
        var chunks: [String: [UInt8]] = [:]
        /// Files assembled, by checksum: name, debug id, bytes.
        var files: [String: (name: String, debugId: String?, bytes: [UInt8])] = [:]
        var progress: [String: Int] = [:]
        /// The SHA-1s of each chunk request, in order, and the field used.
        var chunkRequests: [[String]] = []
        var fields: Set<String> = []
        /// Every request line.
        var requests: [String] = []
        /// What the client did wrong (empty when it kept to the protocol).
        var problems: [String] = []
    }

    init(token: String) throws {
        self.token = token
        let server = HTTPServer(maxBodyBytes: 64 << 20) { [weak self] request in
            guard let (status, body) = self?.answer(request) else { return nil }
            return HTTPResponse(status: status, body: Array(body.utf8))
        }
        self.server = server
        port = try server.start(address: "127.0.0.1", port: 0, memoryLimit: 64 << 10, timeout: 10, perClient: 16)
    }

    var url: String { "http://127.0.0.1:\(port)/" }

    func with<Result>(_ body: (inout State) -> Result) -> Result { lock.withLock { body(&state) } }

    func stop() { server?.stop() }

    static func sha1(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 20)
        _ = bytes.withUnsafeBytes { cly_crypto_sha1($0.baseAddress, $0.count, &digest) }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    private func detail(_ status: Int, _ text: String) -> (Int, String) {
        (status, CohorlyValue.object(["detail": .string(text)]).jsonString)
    }

    private func answer(_ request: HTTPRequest) -> (Int, String) {
        lock.withLock {
            state.requests.append("\(request.method) \(request.path)")
            guard request.headers["authorization"] == "Bearer \(token)" else {
                return detail(401, "Invalid token")
            }
            switch (request.method, request.path) {
            case ("GET", "/api/0/organizations/\(Self.org)/chunk-upload/"):
                let options: CohorlyValue = [
                    "url": .string("\(url)chunks/"), "chunkSize": .int(state.chunkSize),
                    "chunksPerRequest": .int(state.chunksPerRequest), "maxRequestSize": .int(state.maxRequestSize),
                    "maxFileSize": .int(Int(state.maxFileSize)), "concurrency": 1, "hashAlgorithm": "sha1",
                    "compression": .array(state.compression.map(CohorlyValue.string)),
                    "accept": ["debug_files", "release_files", "pdbs", "sources", "bcsymbolmaps"],
                ]
                return (200, options.jsonString)
            case ("POST", "/chunks/"): return chunks(request)
            case ("POST", "/api/0/projects/\(Self.org)/\(Self.project)/files/difs/assemble/"):
                return assemble(request.body)
            default: return detail(404, "The requested resource does not exist")
            }
        }
    }

    private func chunks(_ request: HTTPRequest) -> (Int, String) {
        if request.body.count > state.maxRequestSize { state.problems.append("request of \(request.body.count) bytes") }
        guard let type = request.headers["content-type"], type.hasPrefix("multipart/form-data; boundary="),
            let boundary = type.split(separator: "=", maxSplits: 1).last
        else {
            state.problems.append("content type \(request.headers["content-type"] ?? "none")")
            return detail(400, "bad content type")
        }
        let delimiter = Array("--\(boundary)".utf8)
        var rest = request.body[...]
        guard let first = rest.firstRange(of: delimiter), first.lowerBound == rest.startIndex else {
            state.problems.append("no opening boundary")
            return detail(400, "malformed")
        }
        rest = rest[first.upperBound...]
        var names: [String] = []
        while !rest.starts(with: Array("--\r\n".utf8)) {
            guard rest.starts(with: Array("\r\n".utf8)), let headEnd = rest.firstRange(of: Array("\r\n\r\n".utf8)),
                let next = rest.firstRange(of: Array("\r\n".utf8) + delimiter)
            else {
                state.problems.append("malformed part")
                return detail(400, "malformed")
            }
            let headers = String(decoding: rest[(rest.startIndex + 2)..<headEnd.lowerBound], as: UTF8.self)
            var body = Array(rest[headEnd.upperBound..<next.lowerBound])
            rest = rest[next.upperBound...]
            guard let field = ["file", "file_gzip"].first(where: { headers.contains("name=\"\($0)\"; filename=\"") }),
                let range = headers.firstRange(of: "filename=\""),
                let quote = headers[range.upperBound...].firstIndex(of: "\"")
            else {
                state.problems.append("a part that is not a chunk: \(headers)")
                return detail(400, "malformed")
            }
            state.fields.insert(field)
            if field == "file_gzip" {
                var inflated: [UInt8] = []
                do {
                    let stream = try ZlibStream(.inflate)
                    try body.withUnsafeBytes { try stream.process($0) { inflated += $0 } }
                    try stream.finish { inflated += $0 }
                } catch {
                    state.problems.append("a file_gzip part that is not gzip")
                    return detail(400, "bad gzip")
                }
                body = inflated
            }
            let name = String(headers[range.upperBound..<quote])
            guard Self.sha1(body) == name else {
                state.problems.append("chunk \(name) has other bytes")
                return detail(400, "Checksum mismatch")
            }
            if body.count > state.chunkSize { state.problems.append("chunk of \(body.count) bytes") }
            state.chunks[name] = body
            names.append(name)
        }
        if names.count > state.chunksPerRequest { state.problems.append("\(names.count) chunks in one request") }
        state.chunkRequests.append(names)
        return (200, "")
    }

    private func assemble(_ body: [UInt8]) -> (Int, String) {
        guard let files = CohorlyValue(bytes: body)?.objectValue else { return detail(400, "Invalid json body") }
        var answer: [String: CohorlyValue] = [:]
        for (checksum, file) in files {
            let chunks = file["chunks"]?.arrayValue?.compactMap(\.stringValue) ?? []
            func reply(_ state: String, missing: [String] = [], detail: String? = nil) {
                answer[checksum] = [
                    "state": .string(state), "missingChunks": .array(missing.map(CohorlyValue.string)),
                    "detail": detail.map(CohorlyValue.string) ?? .null,
                ]
            }
            if state.files[checksum] != nil {
                if let error = state.errorDetail { reply("error", detail: error) } else { reply("ok") }
                continue
            }
            var missing: [String] = []
            for chunk in chunks where state.chunks[chunk] == nil && !missing.contains(chunk) { missing.append(chunk) }
            guard missing.isEmpty, !chunks.isEmpty else {
                reply("not_found", missing: missing)
                continue
            }
            let done = state.progress[checksum, default: 0]
            if state.neverFinish || done < state.pollsUntilOK {
                state.progress[checksum] = done + 1
                reply(done == 0 ? "created" : "assembling")
                continue
            }
            let bytes = chunks.flatMap { state.chunks[$0] ?? [] }
            guard Self.sha1(bytes) == checksum else {
                reply("error", detail: "Reported checksum mismatch")
                continue
            }
            if let error = state.errorDetail {
                reply("error", detail: error)
                continue
            }
            state.files[checksum] = (file["name"]?.stringValue ?? "", file["debug_id"]?.stringValue, bytes)
            reply("ok")
        }
        return (200, CohorlyValue.object(answer).jsonString)
    }
}
