import CCurl
import CohorlyCollectorAPI
import CohorlyDigests
import CohorlyHTTPClient
import CohorlyJSON
import CohorlySymbols
import Foundation

/// The work behind `cohorly debug-files upload`: find ELF files, decide what each is for, hash them, ask the
/// collector what it lacks, then stream only that (deflated, in bounded memory) with retries.
struct DebugFileUploader {
    /// One (file, kind) the collector should have.
    struct Item {
        var path: String
        var kind: DebugFileKind
        var buildId: String
        var sha256: String
        var size: Int64
    }

    /// A file found under the paths and what became of it.
    struct FileResult {
        enum Status: String {
            case uploaded
            case present = "already present"
            case skipped
            case failed
            /// `--dry-run`: found, checked and hashed, but the collector was not asked.
            case wouldUpload = "would upload"
        }
        var path: String
        var status: Status
        var buildId: String?
        var kinds: [DebugFileKind] = []
        var size: Int64 = 0
        var bytesSent: Int64 = 0
        var reason: String?
        /// Which of the named PATHs it was found under (its index).
        var root = 0
    }

    let host: String
    let release: String
    let authToken: String?
    /// Asks the collector to replace a stored file of the same build id and kind that has other bytes.
    var force = false
    /// Transient failures are retried this many times (so `retries + 1` attempts), waiting `retryDelay`, then
    /// twice as long each time.
    var retries = 3
    var retryDelay: Double = 0.25
    /// Called with (file name, bytes of the file read so far, its size) while a file streams.
    var progress: ((String, Int64, Int64) -> Void)?

    /// An error that stops the whole run (the collector can't be reached or refused the check).
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What `path` should be stored as: a debug companion is `debuginfo`; a binary is `executable`, and also
    /// `debuginfo` when it has DWARF. Nil with a reason when it is of no use for symbolication.
    static func kinds(of info: ObjectInfo) -> (kinds: [DebugFileKind], reason: String?) {
        if [.relocatable, .core, .other].contains(info.kind) { return ([], "\(info.kind.rawValue) file") }
        guard info.codeId != nil else { return ([], "no GNU build id") }
        if info.kind == .debugCompanion {
            return info.hasDebugInfo ? ([.debuginfo], nil) : ([], "debug file without debug info")
        }
        guard info.hasDebugInfo || info.hasSymtab || info.hasDynsym else {
            return ([], "neither debug info nor symbols")
        }
        return (info.hasDebugInfo ? [.executable, .debuginfo] : [.executable], nil)
    }

    /// The note on a binary without DWARF whose debug file is not in the run either: uploaded (its symbols still
    /// name functions), but a crash in it will have no file:line.
    static let noDebugInfoWarning =
        "no DWARF debug info: crashes in it will have no file:line; upload the binary before it is stripped, or its"
        + " debug file (objcopy --only-keep-debug) with it"

    /// SHA-256 and size of a file, read in 1 MiB pieces.
    static func hash(_ path: String) throws -> (sha256: String, size: Int64) {
        let hash = Digest(.sha256)
        var size: Int64 = 0
        do {
            try RegularFile(path: path).forEachChunk { chunk in
                hash.update(chunk)
                size += Int64(chunk.count)
                return true
            }
        } catch {
            throw Failure(description: error.description)
        }
        do {
            return (try hash.finalizeHex(), size)
        } catch {
            throw Failure(description: error.description)
        }
    }

    // MARK: - Talking to the collector

    private func url(_ path: String) -> String {
        (host.hasSuffix("/") ? String(host.dropLast()) : host) + path
    }

    /// `POST /api/debug-files/check`: the items the collector lacks (it attaches the rest to the release).
    /// Asks 1000 at a time, so each request stays well under the collector's body limit.
    func missing(_ items: [Item]) throws -> [Item] {
        try stride(from: 0, to: items.count, by: 1000).flatMap {
            try missingBatch(Array(items[$0..<min($0 + 1000, items.count)]))
        }
    }

    private func missingBatch(_ items: [Item]) throws -> [Item] {
        guard !items.isEmpty else { return [] }
        let files: [CohorlyValue] = items.map {
            ["build_id": .string($0.buildId), "kind": .string($0.kind.rawValue), "sha256": .string($0.sha256)]
        }
        let body: CohorlyValue = ["release": .string(release), "files": .array(files)]
        guard let target = URL(string: url("/api/debug-files/check")) else {
            throw Failure(description: "invalid host \(host)")
        }
        // The secret itself is never sent: the server proves it holds it before it sees the file list.
        let authentication = authToken.map { CollectorAuthentication(url: URL(string: url("/")) ?? target, secret: $0) }
        if let authentication {
            switch authentication.verify() {
            case nil: break
            case .unreachable(let message)?: throw Failure(description: CollectorAddress.unreachable(host, message))
            case .unproven(let detail)?:
                throw Failure(description: CollectorAuthentication.unprovenMessage(host, detail))
            case .status(let status, let answer)?:
                let hint = CollectorAddress.hint(status: status, sentSecret: true).map { "\n" + $0 } ?? ""
                throw Failure(description: "\(host) refused the check (\(status)): \(Self.reason(answer))" + hint)
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
                else { throw Failure(description: "unexpected answer from \(host)") }
                let keys = Set(
                    list.map {
                        ($0["build_id"]?.stringValue ?? "") + "/" + ($0["kind"]?.stringValue ?? "") + "/"
                            + ($0["sha256"]?.stringValue ?? "")
                    })
                return items.filter { keys.contains($0.buildId + "/" + $0.kind.rawValue + "/" + $0.sha256) }
            case .http(let status, _, let answer) where status < 500 || attempt >= retries:
                let hint = CollectorAddress.hint(status: status, sentSecret: authToken != nil).map { "\n" + $0 } ?? ""
                throw Failure(description: "\(host) refused the check (\(status)): \(Self.reason(answer))" + hint)
            case .failure(let message) where attempt >= retries:
                throw Failure(description: CollectorAddress.unreachable(host, message))
            default:
                backoff(attempt)
                attempt += 1
            }
        }
    }

    /// Streams one item with retries; returns the compressed bytes sent over all attempts, or throws the
    /// last failure (with those bytes).
    func upload(_ item: Item) -> (bytesSent: Int64, error: String?) {
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

    /// The `error` of a JSON answer, else its text (shortened).
    static func reason(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(1 << 20), as: UTF8.self)
        if let error = CohorlyValue(json: text)?["error"]?.stringValue { return TerminalText.fromServer(error) }
        return TerminalText.fromServer(String(text.prefix(4096)))
    }
}
