import CohorlyCollectorCore
import CohorlyCompression
import CohorlyDigests
import Foundation

/// One `POST /api/0/organizations/<org>/chunk-upload/` in progress (Sentry's chunk upload, as `sentry-cli
/// debug-files upload` sends it; SentryChunkRoutes.swift): a `multipart/form-data` body whose parts are chunks in
/// field `file` (or `file_gzip`, gzip-compressed), each named by the SHA-1 of its uncompressed bytes. The body is
/// parsed while it arrives; each chunk is inflated, hashed and written to a temp file, checked against its name
/// and moved to `<debug-files>/chunks/<sha1>`. Memory stays bounded (one piece of the body and a part's headers);
/// disk too: a chunk over `chunkSize`, more than `chunksPerRequest` chunks, a body over `maxRequestSize`, or a
/// chunk that would take the free space ingestion keeps, refuses the request. Runs on the connection's thread
/// only.
final class SentryChunkUpload: RequestBodySink {
    /// What the chunk endpoint announces and enforces.
    struct Limits {
        /// Largest chunk, uncompressed.
        var chunkSize = 8 << 20
        /// Most chunks in one request.
        var chunksPerRequest = 64
        /// Largest request body, as sent.
        var maxRequestSize = 32 << 20
        /// Free space left for ingestion (`CollectorConfiguration.diskReserveBytes`).
        var reserve: Int64 = 0
    }

    private enum Phase {
        case preamble, afterDelimiter, headers, body, epilogue
    }

    /// One chunk being written.
    private final class Part {
        let name: String
        let temporary: URL
        var fd: Int32
        let hash = Digest(.sha1)
        let inflater: ZlibStream?
        var size = 0

        init(name: String, temporary: URL, fd: Int32, inflater: ZlibStream?) {
            self.name = name
            self.temporary = temporary
            self.fd = fd
            self.inflater = inflater
        }

        deinit {
            if fd >= 0 { close(fd) }
            unlink(temporary.path)
        }
    }

    private let store: DebugFileStore
    private let limits: Limits
    private let opening: [UInt8]
    private let delimiter: [UInt8]
    private var phase = Phase.preamble
    private var pending: [UInt8] = []
    private var part: Part?
    private var stored: [String] = []
    private var received = 0
    private var receivedAtFailure = 0
    private var failure: (status: Int, detail: String)?

    /// The sink for a request of content type `contentType`, or the refusal of it.
    static func start(_ request: HTTPRequest, store: DebugFileStore, limits: Limits) -> any RequestBodySink {
        guard let type = request.header("Content-Type"),
            Router.mediaType(type.split(separator: ";").first ?? "") == "multipart/form-data",
            let boundary = boundary(type)
        else {
            return RejectedUpload(SentryChunkRoutes.detail(400, "expected multipart/form-data with a boundary"))
        }
        if let length = request.header("Content-Length").flatMap(Int.init), length > limits.maxRequestSize {
            return RejectedUpload(
                SentryChunkRoutes.detail(413, "request of \(length) bytes (limit \(limits.maxRequestSize))"))
        }
        return SentryChunkUpload(store: store, boundary: boundary, limits: limits)
    }

    /// The `boundary` parameter of a multipart content type (quotes removed), 1…70 characters (RFC 2046).
    static func boundary(_ contentType: String) -> String? {
        guard let value = parameter("boundary", in: Substring(contentType)) else { return nil }
        return (1...70).contains(value.utf8.count) ? value : nil
    }

    private init(store: DebugFileStore, boundary: String, limits: Limits) {
        self.store = store
        self.limits = limits
        opening = Array("--\(boundary)".utf8)
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        received += bytes.count
        guard failure == nil else { return received - receivedAtFailure <= DebugFileUpload.drainLimit }
        guard received <= limits.maxRequestSize else {
            fail(413, "request over \(limits.maxRequestSize) bytes")
            return true
        }
        pending += bytes
        process()
        return true
    }

    func finish(_ request: HTTPRequest) -> HTTPResponse? {
        if failure == nil, phase != .epilogue { fail(400, "the multipart body ends early") }
        if let failure {
            return SentryChunkRoutes.detail(failure.status, failure.detail)
        }
        return .json(200, [:])
    }

    private func process() {
        while failure == nil {
            switch phase {
            case .preamble:
                guard let range = pending.firstRange(of: opening) else {
                    if pending.count > opening.count + 1024 { fail(400, "no opening boundary") }
                    return
                }
                pending.removeSubrange(..<range.upperBound)
                phase = .afterDelimiter
            case .afterDelimiter:
                guard pending.count >= 2 else { return }
                if pending[0] == UInt8(ascii: "-"), pending[1] == UInt8(ascii: "-") {
                    phase = .epilogue
                } else if pending[0] == UInt8(ascii: "\r"), pending[1] == UInt8(ascii: "\n") {
                    phase = .headers
                } else {
                    return fail(400, "malformed boundary line")
                }
                pending.removeFirst(2)
            case .headers:
                guard let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) else {
                    if pending.count > 8192 { fail(400, "a part's headers are over 8 KiB") }
                    return
                }
                let headers = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                pending.removeSubrange(..<end.upperBound)
                startPart(headers)
                phase = .body
            case .body:
                if let range = pending.firstRange(of: delimiter) {
                    write(pending[..<range.lowerBound])
                    pending.removeSubrange(..<range.upperBound)
                    endPart()
                    phase = .afterDelimiter
                } else {
                    let keep = min(pending.count, delimiter.count - 1)
                    write(pending[..<(pending.count - keep)])
                    pending.removeFirst(pending.count - keep)
                    return
                }
            case .epilogue:
                pending.removeAll()
                return
            }
        }
    }

    private func startPart(_ headers: String) {
        guard stored.count < limits.chunksPerRequest else {
            return fail(400, "more than \(limits.chunksPerRequest) chunks in one request")
        }
        let disposition = headers.split(separator: "\r\n").first {
            $0.lowercased().hasPrefix("content-disposition:")
        }
        let field = disposition.flatMap { Self.parameter("name", in: $0) }
        guard let field, field == "file" || field == "file_gzip" else {
            return fail(400, "a part that is not a chunk (field file or file_gzip)")
        }
        guard let name = disposition.flatMap({ Self.parameter("filename", in: $0) })?.lowercased(),
            name.utf8.count == 40, name.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else {
            return fail(400, "a chunk's file name must be the SHA-1 of its bytes")
        }
        if let free = store.freeBytes(), Int64(limits.chunkSize) > free - limits.reserve {
            return fail(
                507,
                DebugFileUpload.floorReason(needed: Int64(limits.chunkSize), free: free, reserve: limits.reserve))
        }
        let temporary = store.temporaryURL()
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return fail(500, "cannot create a temp file: \(String(cString: strerror(errno)))") }
        var inflater: ZlibStream?
        if field == "file_gzip" {
            do {
                inflater = try ZlibStream(.inflate)
            } catch {
                close(fd)
                unlink(temporary.path)
                return fail(500, "\(error)")
            }
        }
        part = Part(name: name, temporary: temporary, fd: fd, inflater: inflater)
    }

    /// `key="value"` (or unquoted) in a header line.
    static func parameter(_ key: String, in line: Substring) -> String? {
        for piece in line.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, Router.mediaType(pair[0]) == key else { continue }
            var value = pair[1].drop { $0 == " " }
            while value.last == " " { value = value.dropLast() }
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            return String(value)
        }
        return nil
    }

    private func write(_ bytes: ArraySlice<UInt8>) {
        guard failure == nil, let part, !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { raw in
            if let inflater = part.inflater {
                do {
                    try inflater.process(raw) { writeInflated($0, part) }
                } catch {
                    fail(400, "chunk \(part.name): invalid gzip: \(error)")
                }
            } else {
                writeInflated(raw, part)
            }
        }
    }

    private func writeInflated(_ bytes: UnsafeRawBufferPointer, _ part: Part) {
        guard failure == nil, let base = bytes.baseAddress else { return }
        part.size += bytes.count
        guard part.size <= limits.chunkSize else {
            return fail(400, "chunk \(part.name) is over the chunk size of \(limits.chunkSize) bytes")
        }
        part.hash.update(bytes)
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.write(part.fd, base + offset, bytes.count - offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                return fail(errno == ENOSPC ? 507 : 500, "cannot write: \(String(cString: strerror(errno)))")
            }
            offset += count
        }
    }

    private func endPart() {
        guard failure == nil, let part else { return }
        self.part = nil
        if let inflater = part.inflater {
            do {
                try inflater.finish { writeInflated($0, part) }
            } catch {
                return fail(400, "chunk \(part.name): invalid gzip: \(error)")
            }
        }
        guard failure == nil else { return }
        let sha1: String
        do {
            sha1 = try part.hash.finalizeHex()
        } catch {
            return fail(500, error.description)
        }
        guard sha1 == part.name else {
            return fail(400, "Checksum mismatch: chunk \(part.name) has SHA-1 \(sha1)")
        }
        close(part.fd)
        part.fd = -1
        guard rename(part.temporary.path, store.chunkURL(sha1: sha1).path) == 0 else {
            return fail(500, "cannot store a chunk: \(String(cString: strerror(errno)))")
        }
        stored.append(sha1)
    }

    private func fail(_ status: Int, _ detail: String) {
        guard failure == nil else { return }
        failure = (status, detail)
        receivedAtFailure = received
        part = nil  // its temp file goes
        pending = []
    }
}
