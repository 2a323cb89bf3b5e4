import CohorlyHTTPClient
import CohorlyJSON
import CohorlySymbols
import Foundation

/// PostHog's symbol-set API (docs/posthog.md "Upload debug files to PostHog", posthog-cli `api/symbol_sets.rs`): the
/// three calls of
/// an upload. Every call is tried up to `retries + 1` times when the answer is a connection error, a 429 or a
/// 5xx, waiting `retryDelay`, then twice as long each time (`sleep` is injectable for tests). Other answers are
/// errors shown with PostHog's `code` and `detail`. The personal API key goes only to `host`, as
/// `Authorization: Bearer`, never into a message.
package struct PostHogSymbolSetAPI {
    /// `https://us.posthog.com` or a self-hosted instance (no trailing slash needed).
    package let host: String
    /// The project (or environment) id in `/api/projects/<id>/…`.
    package let projectId: String
    /// The personal API key (`phx_…`).
    package let apiKey: String
    /// Replace a symbol set PostHog holds under the same debug id with other content (`force`). Default false:
    /// such a set is refused with 400 `content_hash_mismatch`.
    package var force = false
    /// Retries after the first attempt. Default 3.
    package var retries = 3
    /// The first wait between attempts, in seconds, doubled for each later one. Default 0.5.
    package var retryDelay = 0.5
    /// How a wait is done.
    package var sleep: @Sendable (Double) -> Void = { seconds in usleep(UInt32(min(seconds, 30) * 1_000_000)) }

    /// The API of the PostHog at `host` for project `projectId`, with a personal API key.
    package init(host: String, projectId: String, apiKey: String) {
        self.host = host
        self.projectId = projectId
        self.apiKey = apiKey
    }

    /// One symbol set to announce: its debug id (PostHog's `chunk_id`) and content hash.
    package struct Announced {
        package var chunkId: String
        package var contentHash: String

        /// A set to announce.
        package init(chunkId: String, contentHash: String) {
            self.chunkId = chunkId
            self.contentHash = contentHash
        }
    }

    /// Where PostHog wants the bytes of one symbol set: a presigned S3 POST, and the set's id for the finish.
    package struct Started {
        package var symbolSetId: String
        package var url: URL
        /// The form fields to send before the file, sorted by name.
        package var fields: [(String, String)]
    }

    /// A failed call: the HTTP status (nil for a connection error), PostHog's `code` and the reason.
    package struct Failure: Error, CustomStringConvertible {
        package var status: Int?
        package var code: String?
        package var description: String
    }

    /// `POST …/bulk_start_upload`: the sets PostHog wants, by chunk id. A set absent from the answer is already
    /// there with the same content.
    package func start(_ sets: [Announced]) throws(Failure) -> [String: Started] {
        let list: [CohorlyValue] = sets.map {
            ["chunk_id": .string($0.chunkId), "release_id": .null, "content_hash": .string($0.contentHash)]
        }
        let body: CohorlyValue = ["symbol_sets": .array(list), "force": .bool(force), "skip_on_conflict": false]
        let answer = try call("bulk_start_upload", body)
        guard let map = answer["id_map"]?.objectValue else {
            throw Failure(status: nil, code: nil, description: "\(host): unexpected answer to bulk_start_upload")
        }
        var started: [String: Started] = [:]
        for (chunkId, entry) in map {
            guard let id = entry["symbol_set_id"]?.stringValue, let presigned = entry["presigned_url"],
                let address = presigned["url"]?.stringValue, let url = URL(string: address),
                url.scheme == "https" || url.scheme == "http"
            else {
                throw Failure(
                    status: nil, code: nil, description: "\(host): unexpected presigned upload for \(chunkId)")
            }
            let fields = (presigned["fields"]?.objectValue ?? [:]).compactMap { key, value in
                value.stringValue.map { (key, $0) }
            }
            started[chunkId] = Started(symbolSetId: id, url: url, fields: fields.sorted { $0.0 < $1.0 })
        }
        return started
    }

    /// The presigned POST: a multipart form with every field as a text part, then the part `file` (file name
    /// `file`) holding `bytes`. Sent without the API key (the URL is the storage's, not PostHog's).
    package func upload(_ bytes: [UInt8], to started: Started) throws(Failure) {
        let form = MultipartForm(fields: started.fields, file: bytes)
        let request = TransportRequest(
            url: started.url, headers: [("Content-Type", form.contentType)], body: form.body, timeout: 600,
            connectTimeout: 10)
        _ = try send(request, what: "the upload of the symbol set")
    }

    /// `POST …/bulk_finish_upload` with the uploaded sets' content hashes by symbol set id.
    package func finish(_ contentHashes: [String: String]) throws(Failure) {
        let body: CohorlyValue = ["content_hashes": .object(contentHashes.mapValues { .string($0) })]
        _ = try call("bulk_finish_upload", body)
    }

    private func call(_ name: String, _ body: CohorlyValue) throws(Failure) -> CohorlyValue {
        let base = host.hasSuffix("/") ? String(host.dropLast()) : host
        guard let url = URL(string: "\(base)/api/projects/\(projectId)/error_tracking/symbol_sets/\(name)") else {
            throw Failure(status: nil, code: nil, description: "invalid host \(host)")
        }
        let request = TransportRequest(
            url: url, headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(apiKey)")],
            body: Array(body.jsonString.utf8), timeout: 120, connectTimeout: 10)
        let answer = try send(request, what: name)
        return CohorlyValue(bytes: answer) ?? .null
    }

    /// Sends with retries; the body of a 2xx answer.
    private func send(_ request: TransportRequest, what: String) throws(Failure) -> [UInt8] {
        var attempt = 0
        while true {
            let response = CurlTransport().send(request)
            switch response {
            case .http(let status, _, let body) where (200..<300).contains(status):
                return body
            case .http(let status, _, _) where (status == 429 || status >= 500) && attempt < retries: break
            case .failure where attempt < retries: break
            case .http(let status, _, let body):
                let (code, reason) = Self.reason(body)
                let shown = [code, reason].compactMap { $0 }.joined(separator: ": ")
                throw Failure(status: status, code: code, description: "\(what) answered \(status) \(shown)")
            case .failure(let message):
                throw Failure(
                    status: nil, code: nil,
                    description:
                        "\(what): cannot reach \(request.url.host ?? host): \(message) (\(attempt + 1) attempts)")
            }
            sleep(retryDelay * Double(1 << min(attempt, 6)))
            attempt += 1
        }
    }

    /// PostHog's error (`{type, code, detail, attr}`): its code and detail; else the body's start (server text:
    /// escaped and clipped, ``TerminalText/fromServer(_:)``).
    package static func reason(_ body: [UInt8]) -> (code: String?, detail: String) {
        if let error = CohorlyValue(bytes: body), let detail = error["detail"]?.stringValue {
            return (error["code"]?.stringValue.map(TerminalText.fromServer), TerminalText.fromServer(detail))
        }
        return (nil, TerminalText.fromServer(String(decoding: body.prefix(4096), as: UTF8.self)))
    }
}

/// A `multipart/form-data` body (RFC 7578): text fields, then one file part named `file`.
package struct MultipartForm {
    /// The part separator: `cohorly-` and 128 random bits.
    package let boundary: String
    /// The whole body.
    package let body: [UInt8]

    /// The `Content-Type` header naming the boundary.
    package var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The body of `fields` (text parts), then `file`.
    package init(fields: [(String, String)], file: [UInt8]) {
        // 128 random bits: the chance that the boundary occurs in the data is nil in practice.
        var random = SystemRandomNumberGenerator()
        boundary = "cohorly-" + (0..<4).map { _ in String(random.next() as UInt32, radix: 16) }.joined(separator: "-")
        var body: [UInt8] = []
        body.reserveCapacity(file.count + 1024)
        func quoted(_ name: String) -> String {
            // RFC 7578 4.2: a quote or line break in a name is percent-encoded.
            name.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
                .replacingOccurrences(of: "\n", with: "%0A")
        }
        for (name, value) in fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(name))\"\r\n\r\n".utf8)
            body += Array(value.utf8) + Array("\r\n".utf8)
        }
        body += Array(
            ("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").utf8)
        body += file
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        self.body = body
    }
}
