import CohorlyHTTPClient
import CohorlyJSON
import CohorlySymbols
import Foundation

/// Sentry's chunk-upload API for debug files (docs/sentry.md "Debug files", sentry-cli's
/// `chunking`): the server's options, the upload of chunks, and the assemble call. Every call is tried up to
/// `retries + 1` times on a connection error, a 429 or a 5xx, waiting `retryDelay`, then twice as long each
/// time. The auth token goes only to `url`'s host (or a region host under it, such as `us.sentry.io` for
/// `sentry.io`), as `Authorization: Bearer`, and never into a message.
package struct SentryChunkAPI {
    /// `https://sentry.io` or a self-hosted Sentry (`SENTRY_URL`).
    package let url: String
    /// The organization and project slugs.
    package let org: String
    package let project: String
    /// The auth token (`SENTRY_AUTH_TOKEN`).
    package let token: String
    /// Retries after the first attempt. Default 3.
    package var retries = 3
    /// The first wait between attempts, in seconds. Default 0.5.
    package var retryDelay = 0.5
    /// How a wait is done.
    package var sleep: @Sendable (Double) -> Void = { seconds in usleep(UInt32(min(seconds, 30) * 1_000_000)) }

    /// The API of the Sentry at `url` for the organization `org` and project `project`, with its auth token.
    package init(url: String, org: String, project: String, token: String) {
        self.url = url
        self.org = org
        self.project = project
        self.token = token
    }

    /// What `GET …/chunk-upload/` answers.
    package struct Options {
        package var url: URL
        package var chunkSize: Int
        package var chunksPerRequest: Int
        package var maxRequestSize: Int
        package var maxFileSize: Int64
        package var gzip: Bool
    }

    /// One file's state after an assemble call.
    package struct FileState {
        package var state: String
        package var missingChunks: [String]
        package var detail: String?
    }

    /// A failed call: the HTTP status (nil for a connection error) and the reason.
    package struct Failure: Error, CustomStringConvertible {
        package var status: Int?
        package var description: String
    }

    /// The largest chunk this client takes: 64 MiB (Sentry's is 8 MiB), so memory stays bounded.
    package static let largestChunk = 64 << 20
    /// The largest request body this client builds: 64 MiB (Sentry's limit is 32 MiB).
    package static let largestRequest = 64 << 20

    private var base: String { url.hasSuffix("/") ? String(url.dropLast()) : url }

    /// `GET /api/0/organizations/{org}/chunk-upload/`, checked: SHA-1, debug files accepted, sizes in range.
    package func options() throws(Failure) -> Options {
        let answer = try call("GET", "/api/0/organizations/\(org)/chunk-upload/", nil, what: "chunk-upload")
        guard let value = CohorlyValue(bytes: answer), let address = value["url"]?.stringValue else {
            throw Failure(
                status: nil,
                description: "\(url): unexpected answer to chunk-upload (no url): is --url (SENTRY_URL) a Sentry?")
        }
        if let algorithm = value["hashAlgorithm"]?.stringValue, algorithm != "sha1" {
            throw Failure(status: nil, description: "\(url): chunk-upload wants \(algorithm) checksums, not sha1")
        }
        let accepted = value["accept"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard accepted.contains("debug_files") else {
            throw Failure(
                status: nil,
                description: "\(url): this server does not take debug files by chunk upload (a Sentry too old for it?)")
        }
        guard let chunkURL = resolve(address) else {
            throw Failure(
                status: nil,
                description:
                    "\(url): chunk-upload names an upload URL on another host, where the token is not sent; give"
                    + " that Sentry's own address as --url (SENTRY_URL)")
        }
        let chunkSize = value["chunkSize"]?.intValue ?? 0
        guard (1...Self.largestChunk).contains(chunkSize) else {
            throw Failure(status: nil, description: "\(url): chunkSize \(chunkSize) out of range")
        }
        let perRequest = max(1, value["chunksPerRequest"]?.intValue ?? 64)
        let maxRequest = min(max(1, value["maxRequestSize"]?.intValue ?? 32 << 20), Self.largestRequest)
        let maxFile = Int64(value["maxFileSize"]?.intValue ?? 2 << 30)
        let gzip = value["compression"]?.arrayValue?.contains("gzip") ?? false
        return Options(
            url: chunkURL, chunkSize: chunkSize, chunksPerRequest: perRequest, maxRequestSize: maxRequest,
            maxFileSize: maxFile, gzip: gzip)
    }

    /// The chunk URL, absolute or relative to `url`; nil when it names a host the token must not go to.
    private func resolve(_ address: String) -> URL? {
        guard let home = URL(string: base), let homeHost = home.host?.lowercased() else { return nil }
        guard let target = URL(string: address, relativeTo: home)?.absoluteURL, let host = target.host?.lowercased()
        else { return nil }
        let sameOrigin = host == homeHost && target.scheme == home.scheme && target.port == home.port
        let region = target.scheme == "https" && host.hasSuffix("." + homeHost)
        return sameOrigin || region ? target : nil
    }

    /// `POST {options.url}`: one multipart part per chunk (`file`, or `file_gzip` gzipped), each named by its
    /// SHA-1. Returns the bytes sent.
    package func upload(_ chunks: [(sha1: String, bytes: [UInt8])], gzip: Bool, to target: URL) throws(Failure) -> Int {
        let form = ChunkForm(chunks, field: gzip ? "file_gzip" : "file")
        let request = TransportRequest(
            url: target, headers: [("Content-Type", form.contentType), ("Authorization", "Bearer \(token)")],
            body: form.body, timeout: 600, connectTimeout: 10)
        _ = try send(request, what: "the chunk upload")
        return form.body.count
    }

    /// `POST /api/0/projects/{org}/{project}/files/difs/assemble/` for `files`: each file's state by checksum.
    package func assemble(_ files: [SentryDebugFile]) throws(Failure) -> [String: FileState] {
        var body: [String: CohorlyValue] = [:]
        for file in files {
            body[file.checksum] = [
                "name": .string(file.name), "debug_id": .string(file.debugId),
                "chunks": .array(file.chunks.map(CohorlyValue.string)),
            ]
        }
        let answer = try call(
            "POST", "/api/0/projects/\(org)/\(project)/files/difs/assemble/", .object(body), what: "assemble")
        guard let states = CohorlyValue(bytes: answer)?.objectValue else {
            throw Failure(status: nil, description: "\(url): unexpected answer to assemble")
        }
        return states.compactMapValues { entry in
            guard let state = entry["state"]?.stringValue else { return nil }
            return FileState(
                state: state, missingChunks: entry["missingChunks"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                detail: entry["detail"]?.stringValue)
        }
    }

    private func call(_ method: String, _ path: String, _ body: CohorlyValue?, what: String) throws(Failure)
        -> [UInt8]
    {
        guard let target = URL(string: base + path) else {
            throw Failure(status: nil, description: "invalid url \(url) (use an http:// or https:// URL)")
        }
        var headers = [("Authorization", "Bearer \(token)")]
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let request = TransportRequest(
            url: target, method: method, headers: headers, body: body.map { Array($0.jsonString.utf8) } ?? [],
            timeout: 120, connectTimeout: 10)
        return try send(request, what: what)
    }

    /// Sends with retries; the body of a 2xx answer.
    private func send(_ request: TransportRequest, what: String) throws(Failure) -> [UInt8] {
        var attempt = 0
        while true {
            switch CurlTransport().send(request) {
            case .http(let status, _, let body) where (200..<300).contains(status): return body
            case .http(let status, _, _) where (status == 429 || status >= 500) && attempt < retries: break
            case .failure where attempt < retries: break
            case .http(let status, _, let body):
                throw Failure(status: status, description: "\(what) answered \(status) \(Self.reason(body))")
            case .failure(let message):
                throw Failure(
                    status: nil,
                    description:
                        "\(what): cannot reach \(request.url.host ?? url): \(message) (\(attempt + 1) attempts)")
            }
            sleep(retryDelay * Double(1 << min(attempt, 6)))
            attempt += 1
        }
    }

    /// Sentry's error (`{"detail": …}`), else the body's start (server text: escaped and clipped,
    /// ``TerminalText/fromServer(_:)``).
    package static func reason(_ body: [UInt8]) -> String {
        if let detail = CohorlyValue(bytes: body)?["detail"] {
            return TerminalText.fromServer(detail.stringValue ?? detail.jsonString)
        }
        return TerminalText.fromServer(String(decoding: body.prefix(4096), as: UTF8.self))
    }
}

/// A `multipart/form-data` body (RFC 7578) of chunks: one part per chunk in `field`, its file name the chunk's
/// SHA-1 (what Sentry checks).
package struct ChunkForm {
    /// The part separator: `cohorly-` and 128 random bits.
    package let boundary: String
    /// The whole body.
    package let body: [UInt8]

    /// The `Content-Type` header naming the boundary.
    package var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The body of `chunks`, each a part of `field`.
    package init(_ chunks: [(sha1: String, bytes: [UInt8])], field: String) {
        var random = SystemRandomNumberGenerator()
        boundary = "cohorly-" + (0..<4).map { _ in String(random.next() as UInt32, radix: 16) }.joined(separator: "-")
        var body: [UInt8] = []
        body.reserveCapacity(chunks.reduce(256) { $0 + $1.bytes.count + 200 })
        for chunk in chunks {
            body += Array(
                ("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field)\"; filename=\"\(chunk.sha1)\"\r\n"
                    + "Content-Type: application/octet-stream\r\n\r\n").utf8)
            body += chunk.bytes
            body += Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        self.body = body
    }
}
