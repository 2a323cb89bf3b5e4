import CCrypto
import Cohorly
import Foundation

import CohorlyCollector
@testable import CohorlyCollectorCore

/// PostHog's symbol-set API on 127.0.0.1 (ephemeral port; the collector's libmicrohttpd server), as docs/posthog.md
/// "Upload debug files to PostHog" describes it:
/// `bulk_start_upload` (answers an `id_map` entry with a presigned POST for each set it lacks, omits a set it
/// holds with the same hash, refuses a different hash with 400 `content_hash_mismatch` unless `force`), the presigned POST
/// (on this server too: a multipart form parsed strictly — every field as a text part in order, then the part
/// `file` with file name `file`), and `bulk_finish_upload` (checks each hash against the SHA-512 of the bytes
/// received). It records what it saw, and can fail the next calls of a kind with 503 to exercise retries.
final class PostHogMock: @unchecked Sendable {
    static let projectId = "4242"
    let apiKey: String
    private(set) var port: UInt16 = 0
    private var server: HTTPServer?
    private let lock = NSLock()
    private var state = State()

    /// What the mock holds and saw.
    struct State {
        /// Symbol sets stored, by chunk id: their content hash.
        var stored: [String: String] = [:]
        /// Started but not finished: symbol set id → (chunk id, hash announced, storage key).
        var pending: [String: (chunkId: String, hash: String, key: String)] = [:]
        /// Bytes received by the presigned POST, by storage key.
        var objects: [String: [UInt8]] = [:]
        /// The chunk ids of each `bulk_start_upload`, in order.
        var startBatches: [[String]] = []
        /// Every request: `METHOD path` and its Authorization header.
        var requests: [(line: String, authorization: String?)] = []
        /// How many of the next calls of a kind (`start`, `upload`, `finish`) answer 503.
        var failures: [String: Int] = [:]
        /// Multipart problems seen (empty when every presigned POST was well formed).
        var multipartErrors: [String] = []
        /// Calls of `bulk_finish_upload` answered 201.
        var finished = 0
    }

    init(apiKey: String) throws {
        self.apiKey = apiKey
        let server = HTTPServer(maxBodyBytes: 64 << 20) { [weak self] request in
            guard let (status, body) = self?.answer(request) else { return nil }
            return HTTPResponse(status: status, body: Array(body.utf8))
        }
        self.server = server
        port = try server.start(address: "127.0.0.1", port: 0, memoryLimit: 64 << 10, timeout: 10, perClient: 16)
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Reads or changes the state.
    func with<Result>(_ body: (inout State) -> Result) -> Result { lock.withLock { body(&state) } }

    func stop() { server?.stop() }

    private func error(_ status: Int, _ code: String, _ detail: String) -> (Int, String) {
        let value: CohorlyValue = [
            "type": "validation_error", "code": .string(code), "detail": .string(detail), "attr": nil,
        ]
        return (status, value.jsonString)
    }

    private func answer(_ request: HTTPRequest) -> (Int, String) {
        lock.withLock {
            state.requests.append(("\(request.method) \(request.path)", request.headers["authorization"]))
            let prefix = "/api/projects/\(Self.projectId)/error_tracking/symbol_sets/"
            let kind =
                request.path == prefix + "bulk_start_upload"
                ? "start"
                : request.path == prefix + "bulk_finish_upload" ? "finish" : request.path == "/s3" ? "upload" : ""
            if let left = state.failures[kind], left > 0 {
                state.failures[kind] = left - 1
                return (503, "{\"detail\": \"try again\"}")
            }
            if kind == "start" || kind == "finish" {
                guard request.headers["authorization"] == "Bearer \(apiKey)" else {
                    return error(401, "authentication_failed", "Invalid personal API key.")
                }
            }
            switch (request.method, kind) {
            case ("POST", "start"): return start(request.body)
            case ("POST", "upload"): return upload(request)
            case ("POST", "finish"): return finish(request.body)
            default: return error(404, "not_found", "Not found.")
            }
        }
    }

    private func start(_ body: [UInt8]) -> (Int, String) {
        guard let document = CohorlyValue(bytes: body), let sets = document["symbol_sets"]?.arrayValue,
            case .bool(let force)? = document["force"], document["skip_on_conflict"] == false
        else { return error(400, "invalid_input", "Malformed request.") }
        state.startBatches.append(sets.compactMap { $0["chunk_id"]?.stringValue })
        var map: [String: CohorlyValue] = [:]
        for set in sets {
            guard let chunk = set["chunk_id"]?.stringValue, let hash = set["content_hash"]?.stringValue,
                set["release_id"] == .null
            else { return error(400, "invalid_input", "Malformed symbol set.") }
            if let stored = state.stored[chunk], !force || stored == hash {
                if stored == hash { continue }
                return error(400, "content_hash_mismatch", "Symbol set \(chunk) already exists with different content.")
            }
            let id = UUID().uuidString.lowercased()
            let key = "symbolsets/\(id)"
            state.pending[id] = (chunk, hash, key)
            map[chunk] = [
                "symbol_set_id": .string(id),
                "presigned_url": [
                    "url": .string(url + "/s3"),
                    "fields": ["key": .string(key), "x-amz-algorithm": "AWS4-HMAC-SHA256", "policy": "eyJ4IjoxfQ=="],
                ],
            ]
        }
        return (201, CohorlyValue.object(["id_map": .object(map)]).jsonString)
    }

    /// The presigned POST, parsed as S3 would: the fields (each must be sent, as a text part, before the file),
    /// then the part `file`.
    private func upload(_ request: HTTPRequest) -> (Int, String) {
        guard let type = request.headers["content-type"], type.hasPrefix("multipart/form-data; boundary="),
            let boundary = type.split(separator: "=", maxSplits: 1).last
        else {
            state.multipartErrors.append("content type \(request.headers["content-type"] ?? "none")")
            return (400, "{}")
        }
        let delimiter = Array("--\(boundary)".utf8)
        var parts: [(headers: String, body: [UInt8])] = []
        var rest = request.body[...]
        guard let first = rest.firstRange(of: delimiter), first.lowerBound == rest.startIndex else {
            state.multipartErrors.append("no opening boundary")
            return (400, "{}")
        }
        rest = rest[first.upperBound...]
        while !rest.starts(with: Array("--\r\n".utf8)) {
            guard rest.starts(with: Array("\r\n".utf8)), let headEnd = rest.firstRange(of: Array("\r\n\r\n".utf8)),
                let next = rest.firstRange(of: Array("\r\n".utf8) + delimiter)
            else {
                state.multipartErrors.append("malformed part")
                return (400, "{}")
            }
            let headers = String(decoding: rest[(rest.startIndex + 2)..<headEnd.lowerBound], as: UTF8.self)
            parts.append((headers, Array(rest[headEnd.upperBound..<next.lowerBound])))
            rest = rest[next.upperBound...]
        }
        guard let file = parts.last, file.headers.contains("name=\"file\"; filename=\"file\"") else {
            state.multipartErrors.append("the last part is not file")
            return (400, "{}")
        }
        var fields: [String: String] = [:]
        for part in parts.dropLast() {
            guard let name = part.headers.firstRange(of: "form-data; name=\"").map({ part.headers[$0.upperBound...] }),
                let quote = name.firstIndex(of: "\""), !part.headers.contains("filename")
            else {
                state.multipartErrors.append("a field that is not a text part: \(part.headers)")
                return (400, "{}")
            }
            fields[String(name[..<quote])] = String(decoding: part.body, as: UTF8.self)
        }
        guard let key = fields["key"], state.pending.values.contains(where: { $0.key == key }),
            fields["x-amz-algorithm"] == "AWS4-HMAC-SHA256", fields["policy"] == "eyJ4IjoxfQ=="
        else {
            state.multipartErrors.append("fields \(fields)")
            return (403, "{}")
        }
        state.objects[key] = file.body
        return (204, "")
    }

    private func finish(_ body: [UInt8]) -> (Int, String) {
        guard let hashes = CohorlyValue(bytes: body)?["content_hashes"]?.objectValue else {
            return error(400, "invalid_input", "Malformed request.")
        }
        for (id, hash) in hashes {
            guard let pending = state.pending[id], let bytes = state.objects[pending.key] else {
                return error(400, "invalid_input", "Unknown symbol set \(id).")
            }
            guard hash.stringValue == pending.hash, hash.stringValue == Self.sha512(bytes) else {
                return error(400, "content_hash_mismatch", "The uploaded content does not match its hash.")
            }
        }
        for (id, _) in hashes {
            if let pending = state.pending.removeValue(forKey: id) { state.stored[pending.chunkId] = pending.hash }
        }
        state.finished += 1
        return (201, "{\"success\": true}")
    }

    /// SHA-512, lowercase hex (libcrypto).
    static func sha512(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 64)
        _ = bytes.withUnsafeBytes { cly_crypto_sha512($0.baseAddress, $0.count, &digest) }
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}
