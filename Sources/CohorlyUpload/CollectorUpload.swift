import CohorlyCollectorAPI
import CohorlyCollectorClient
import CohorlyHTTPClient
import CohorlyJSON
import CohorlySymbols
import Foundation

/// Our collector as a `debug-files upload` destination: find ELF files, decide what each is for, hash them, ask the
/// collector what it lacks (`POST /api/debug-files/check`), then stream only that (deflated, in bounded memory)
/// with retries (`PUT /api/debug-files/<build id>/<kind>`).
package struct CollectorUpload: DebugFileUploadDestination {
    /// One (file, kind) the collector should have.
    package struct Item {
        package var path: String
        package var kind: DebugFileKind
        package var buildId: String
        package var sha256: String
        package var size: Int64

        /// The file at `path` as `kind` of build `buildId`, with its SHA-256 and size.
        package init(path: String, kind: DebugFileKind, buildId: String, sha256: String, size: Int64) {
            self.path = path
            self.kind = kind
            self.buildId = buildId
            self.sha256 = sha256
            self.size = size
        }
    }

    /// The collector's base URL.
    package let host: String
    /// The release the files are attached to.
    package let release: String
    /// The collector's secret (never sent: each request carries a credential made from it).
    package let authToken: String?
    /// Asks the collector to replace a stored file of the same build id and kind that has other bytes.
    package var force = false
    /// Transient failures are retried this many times (so `retries + 1` attempts), waiting `retryDelay`, then
    /// twice as long each time.
    package var retries = 3
    /// The first wait between attempts, in seconds.
    package var retryDelay: Double = 0.25
    /// Called with (file name, bytes of the file read so far, its size) while a file streams.
    package var progress: ((String, Int64, Int64) -> Void)?
    /// Find, check and hash the files and say what would be uploaded; send nothing (the collector is not asked).
    package var dryRun = false
    /// Also make each DWARF build's symbol cache here and send it (kind `symcache`).
    package var includeCache = false

    /// An upload to the collector at `host` for `release`, with its secret when it has one.
    package init(host: String, release: String, authToken: String?) {
        self.host = host
        self.release = release
        self.authToken = authToken
    }

    // MARK: - Talking to the collector

    private func url(_ path: String) -> String {
        (host.hasSuffix("/") ? String(host.dropLast()) : host) + path
    }

    /// `POST /api/debug-files/check`: the items the collector lacks (it attaches the rest to the release).
    /// Asks 1000 at a time, so each request stays well under the collector's body limit.
    package func missing(_ items: [Item]) throws(UploadFailure) -> [Item] {
        var missing: [Item] = []
        for start in stride(from: 0, to: items.count, by: 1000) {
            missing += try missingBatch(Array(items[start..<min(start + 1000, items.count)]))
        }
        return missing
    }

    private func missingBatch(_ items: [Item]) throws(UploadFailure) -> [Item] {
        guard !items.isEmpty else { return [] }
        let files: [CohorlyValue] = items.map {
            ["build_id": .string($0.buildId), "kind": .string($0.kind.rawValue), "sha256": .string($0.sha256)]
        }
        let body: CohorlyValue = ["release": .string(release), "files": .array(files)]
        guard let target = URL(string: url("/api/debug-files/check")) else {
            throw UploadFailure(description: "invalid host \(host)")
        }
        // The secret itself is never sent: the server proves it holds it before it sees the file list.
        let authentication = authToken.map { CollectorAuthentication(url: URL(string: url("/")) ?? target, secret: $0) }
        if let authentication {
            switch authentication.verify() {
            case nil: break
            case .unreachable(let message)?:
                throw UploadFailure(description: CollectorAddress.unreachable(host, message))
            case .unproven(let detail)?:
                throw UploadFailure(description: CollectorAuthentication.unprovenMessage(host, detail))
            case .status(let status, let answer)?:
                let hint = CollectorAddress.hint(status: status, sentSecret: true).map { "\n" + $0 } ?? ""
                throw UploadFailure(
                    description: "\(host) refused the check (\(status)): \(StreamingPut.reason(answer))" + hint)
            }
        }
        var attempt = 0
        while true {
            // A fresh credential each attempt: the collector takes each one once.
            let headers = [("Content-Type", "application/json")] + (authentication?.headers(method: "POST") ?? [])
            let request = TransportRequest(
                url: target, method: "POST", headers: headers, body: Array(body.jsonString.utf8), timeout: 60,
                connectTimeout: 10)
            switch CurlTransport().send(request) {
            case .http(200, _, let answer):
                guard let document = CohorlyValue(json: String(decoding: answer, as: UTF8.self)),
                    let list = document["missing"]?.arrayValue
                else { throw UploadFailure(description: "unexpected answer from \(host)") }
                let keys = Set(
                    list.map {
                        ($0["build_id"]?.stringValue ?? "") + "/" + ($0["kind"]?.stringValue ?? "") + "/"
                            + ($0["sha256"]?.stringValue ?? "")
                    })
                return items.filter { keys.contains($0.buildId + "/" + $0.kind.rawValue + "/" + $0.sha256) }
            case .http(let status, _, let answer) where status < 500 || attempt >= retries:
                let hint = CollectorAddress.hint(status: status, sentSecret: authToken != nil).map { "\n" + $0 } ?? ""
                throw UploadFailure(
                    description: "\(host) refused the check (\(status)): \(StreamingPut.reason(answer))" + hint)
            case .failure(let message) where attempt >= retries:
                throw UploadFailure(description: CollectorAddress.unreachable(host, message))
            default:
                backoff(attempt)
                attempt += 1
            }
        }
    }

    /// Streams one item with retries; returns the compressed bytes sent over all attempts, or throws the
    /// last failure (with those bytes).
    package func upload(_ item: Item) -> (bytesSent: Int64, error: String?) {
        var sent: Int64 = 0
        var attempt = 0
        while true {
            let outcome = StreamingPut.perform(
                url: putURL(item), headers: headers(item), path: item.path, size: item.size,
                progress: progress.map { report in { report(item.path, $0, item.size) } })
            sent += outcome.bytesSent
            switch outcome.result {
            case .success: return (sent, nil)
            case .permanent(let reason): return (sent, reason)
            case .transient(let reason):
                if attempt >= retries { return (sent, reason + " (after \(attempt + 1) attempts)") }
                backoff(attempt)
                attempt += 1
            }
        }
    }

    private func putURL(_ item: Item) -> String {
        var components = URLComponents()
        components.queryItems = [
            URLQueryItem(name: "release", value: release),
            URLQueryItem(name: "name", value: URL(fileURLWithPath: item.path).lastPathComponent),
        ]
        let query = components.percentEncodedQuery ?? ""
        return url("/api/debug-files/\(item.buildId)/\(item.kind.rawValue)?") + query
    }

    private func headers(_ item: Item) -> [String] {
        var list = [
            "Content-Type: application/octet-stream", "Content-Encoding: deflate",
            "X-Cohorly-Content-SHA256: \(item.sha256)", "X-Cohorly-Content-Size: \(item.size)", "Expect:",
        ]
        if let authToken, let target = URL(string: url("/")) {
            list += CollectorAuthentication(url: target, secret: authToken).headers(method: "PUT").map {
                "\($0): \($1)"
            }
        }
        if force { list.append("X-Cohorly-Replace: 1") }
        return list
    }

    private func backoff(_ attempt: Int) {
        let seconds = retryDelay * Double(1 << min(attempt, 6))
        usleep(UInt32(min(seconds, 30) * 1_000_000))
    }
}
