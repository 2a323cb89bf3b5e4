import CohorlyCollectorCore
import CohorlyDigests
import CohorlyFiles
import CohorlySymbols
import Foundation

// Sentry's debug-file chunk upload, so `sentry-cli debug-files upload` (a team's CI) uploads to `cohorly serve`,
// authenticated by the collector's secret as its auth token (`/api/*`, Router+Policy.swift; routes in
// SentryWires.swift):
//
//   GET  /api/0/organizations/<org>/chunk-upload/                 the options: chunk size, limits, the chunk URL
//   POST /api/0/organizations/<org>/chunk-upload/                 multipart chunks, streamed (SentryChunkUpload)
//   POST /api/0/projects/<org>/<project>/files/difs/assemble/     {"<sha1>": {"name", "chunks": [sha1, …]}}
//
// An assembled file is checked as a `PUT /api/debug-files/…` upload is (SHA-1 of the whole, an ELF file with a
// GNU build id, DWARF for debuginfo, code for executable) and stored under its build id: as `debuginfo` when it
// has DWARF, as `executable` when it has code (an unstripped binary is both). Any org and project are accepted.

/// The paths and answers of Sentry's chunk upload.
enum SentryChunkRoutes {
    /// What the chunk endpoint announces and enforces.
    static let limits = SentryChunkUpload.Limits()

    /// The chunk endpoint's path.
    static let chunkUpload = PathPattern("/api/0/organizations/{organization}/chunk-upload/")
    /// The assembly's path.
    static let assemble = PathPattern("/api/0/projects/{organization}/{project}/files/difs/assemble/")

    /// The organization of `/api/0/organizations/<org>/chunk-upload/`, or nil for another path.
    static func organization(_ path: String) -> Substring? { chunkUpload.match(path)?["organization"] }

    /// Whether `path` is `/api/0/projects/<org>/<project>/files/difs/assemble/`.
    static func isAssemble(_ path: String) -> Bool { assemble.match(path) != nil }

    /// Sentry's error body, `{"detail": …}`.
    static func detail(_ status: Int, _ text: String) -> HTTPResponse { .json(status, ["detail": .string(text)]) }

    /// Whether `text` is 40 lowercase hex digits (a SHA-1 as Sentry names chunks and files).
    static func isSHA1(_ text: String) -> Bool {
        text.utf8.count == 40 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

extension Router {
    /// Claims a chunk upload before its body arrives, so the chunks stream to disk.
    func sentryChunkSink(_ request: HTTPRequest) -> (any RequestBodySink)? {
        guard request.method == "POST", SentryChunkRoutes.organization(request.path) != nil else { return nil }
        var limits = SentryChunkRoutes.limits
        limits.reserve = configuration.diskReserveBytes
        return SentryChunkUpload.start(request, store: debugFiles, limits: limits)
    }

    /// The options (`GET` chunk-upload) and the assembly; nil for another path.
    func sentryChunkRoute(_ request: HTTPRequest) -> HTTPResponse? {
        if let organization = SentryChunkRoutes.organization(request.path) {
            guard request.method == "GET" else { return SentryChunkRoutes.detail(405, "use GET or POST") }
            let limits = SentryChunkRoutes.limits
            let host = request.header("Host") ?? "127.0.0.1"
            return .json(
                200,
                [
                    "url": .string("http://\(host)/api/0/organizations/\(organization)/chunk-upload/"),
                    "chunkSize": .int(limits.chunkSize), "chunksPerRequest": .int(limits.chunksPerRequest),
                    "maxRequestSize": .int(limits.maxRequestSize),
                    "maxFileSize": .int(Int(clamping: configuration.maxUploadBytes)), "maxWait": 60,
                    "concurrency": 2, "hashAlgorithm": "sha1", "compression": ["gzip"], "accept": ["debug_files"],
                ])
        }
        guard SentryChunkRoutes.isAssemble(request.path) else { return nil }
        guard request.method == "POST" else { return SentryChunkRoutes.detail(405, "use POST") }
        guard let files = JSONValue(bytes: request.body)?.objectValue else {
            return SentryChunkRoutes.detail(400, "Invalid json body")
        }
        var answer: [String: JSONValue] = [:]
        for (checksum, file) in files {
            let chunks = file["chunks"]?.arrayValue?.compactMap(\.stringValue) ?? []
            let name = (file["name"]?.stringValue ?? "").split(separator: "/").last.map(String.init) ?? ""
            let (state, missing, detail) = assemble(checksum: checksum.lowercased(), chunks: chunks, name: name)
            answer[checksum] = [
                "state": .string(state), "missingChunks": .array(missing.map(JSONValue.string)),
                "detail": detail.map(JSONValue.string) ?? .null,
            ]
        }
        return .json(200, .object(answer))
    }

    /// One file's assembly: `ok`, `not_found` with the chunks the collector lacks, or `error` with why.
    private func assemble(checksum: String, chunks: [String], name: String)
        -> (state: String, missing: [String], detail: String?)
    {
        let chunks = chunks.map { $0.lowercased() }
        guard SentryChunkRoutes.isSHA1(checksum), chunks.allSatisfy(SentryChunkRoutes.isSHA1) else {
            return ("error", [], "checksums must be SHA-1 hex")
        }
        // A file assembled before answers `ok` while its content is stored: nothing is sent twice.
        let assembled = debugFiles.chunkURL(sha1: checksum).appendingPathExtension("assembled")
        if let sha256 = try? String(contentsOf: assembled, encoding: .utf8),
            DebugFileStore.normalizedSHA256(sha256) != nil,
            access(debugFiles.objectURL(sha256: sha256).path, F_OK) == 0
        {
            return ("ok", [], nil)
        }
        var missing: [String] = []
        for chunk in chunks where !missing.contains(chunk) {
            if access(debugFiles.chunkURL(sha1: chunk).path, F_OK) != 0 { missing.append(chunk) }
        }
        guard missing.isEmpty, !chunks.isEmpty else { return ("not_found", missing, nil) }
        do {
            let (buildId, sha256) = try assembleAndStore(checksum: checksum, chunks: chunks, name: name)
            for chunk in Set(chunks) { unlink(debugFiles.chunkURL(sha1: chunk).path) }
            if let fd = try? PrivateFiles.openPrivate(assembled.path, O_WRONLY | O_TRUNC) {
                _ = Array(sha256.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
            }
            if store.issues.enabled { _ = try IssueRegrouping.regroup(buildId: buildId, store: store) }
            return ("ok", [], nil)
        } catch let rejection as DebugFileRejection {
            return ("error", [], rejection.description)
        } catch {
            return ("error", [], "\(error)")
        }
    }

    /// Joins `chunks` into a temp file (SHA-1 checked against `checksum`, size within `--max-upload` and the free
    /// space ingestion keeps), verifies it and stores it under its build id and kinds. Returns the build id and the
    /// content's SHA-256.
    private func assembleAndStore(checksum: String, chunks: [String], name: String) throws -> (String, String) {
        var size: Int64 = 0
        for chunk in chunks {
            var status = stat()
            guard stat(debugFiles.chunkURL(sha1: chunk).path, &status) == 0 else {
                throw DebugFileRejection(status: 400, description: "chunk \(chunk) is gone")
            }
            size += Int64(status.st_size)
        }
        try DebugFileUpload.checkRoom(
            for: size, what: "file", limit: configuration.maxUploadBytes, free: debugFiles.freeBytes(),
            reserve: configuration.diskReserveBytes)
        let temporary = debugFiles.temporaryURL()
        defer { unlink(temporary.path) }
        let (sha1, sha256) = try join(chunks, into: temporary)
        guard sha1 == checksum else {
            throw DebugFileRejection(
                status: 400, description: "Reported checksum mismatch: the file's SHA-1 is \(sha1)")
        }
        let info: ObjectInfo
        do {
            info = try ObjectInfo(path: temporary.path)
        } catch {
            throw DebugFileRejection(status: 422, description: "not an ELF file we can read: \(error)")
        }
        guard let buildId = info.codeId.flatMap(DebugFileStore.normalizedBuildId) else {
            throw DebugFileRejection(status: 422, description: "the file has no GNU build id")
        }
        var kinds: [DebugFileKind] = []
        if info.hasDebugInfo { kinds.append(.debuginfo) }
        if info.kind == .executable || info.kind == .sharedLibrary { kinds.append(.executable) }
        guard let first = kinds.first else {
            throw DebugFileRejection(status: 422, description: "the file has neither DWARF nor code")
        }
        for kind in kinds { _ = try DebugFileStore.verify(path: temporary.path, buildId: buildId, kind: kind) }
        for kind in kinds.dropFirst() {
            if let refusal = debugFiles.replacementRefusal(buildId: buildId, kind: kind, sha256: sha256) {
                throw refusal
            }
        }
        _ = try debugFiles.commit(
            temporary: temporary, buildId: buildId, kind: first, sha256: sha256, size: size, release: "",
            fileName: name)
        for kind in kinds.dropFirst() {
            _ = try debugFiles.checkAndAttach(buildId: buildId, kind: kind, sha256: sha256, release: "")
        }
        debugFiles.noteUpload(stored: true, bytesReceived: size)
        return (buildId, sha256)
    }

    /// Writes the chunks one after another to `path` (fsynced), 1 MiB at a time; their SHA-1 and SHA-256.
    private func join(_ chunks: [String], into path: URL) throws -> (sha1: String, sha256: String) {
        let output = open(path.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else {
            throw DebugFileRejection(
                status: 500, description: "cannot create a temp file: \(String(cString: strerror(errno)))")
        }
        defer { close(output) }
        let sha1 = Digest(.sha1)
        let sha256 = Digest(.sha256)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        func failure(_ what: String) -> DebugFileRejection {
            DebugFileRejection(
                status: errno == ENOSPC ? 507 : 500, description: "\(what): \(String(cString: strerror(errno)))")
        }
        for chunk in chunks {
            let input = open(debugFiles.chunkURL(sha1: chunk).path, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else { throw failure("cannot read chunk \(chunk)") }
            defer { close(input) }
            while true {
                let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { throw failure("cannot read chunk \(chunk)") }
                if count == 0 { break }
                try buffer.withUnsafeBytes { bytes in
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[..<count])
                    sha1.update(piece)
                    sha256.update(piece)
                    var offset = 0
                    while offset < count {
                        let written = write(output, piece.baseAddress.map { $0 + offset }, count - offset)
                        if written < 0 && errno == EINTR { continue }
                        guard written > 0 else { throw failure("cannot write") }
                        offset += written
                    }
                }
            }
        }
        guard fsync(output) == 0 else { throw failure("cannot write") }
        do {
            return (try sha1.finalizeHex(), try sha256.finalizeHex())
        } catch {
            throw DebugFileRejection(status: 500, description: error.description)
        }
    }
}
