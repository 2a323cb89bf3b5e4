import CohorlyCompression
import CohorlyDigests
import Foundation

/// One `PUT /api/debug-files/<build_id>/<kind>` in progress: inflates the body while it arrives (when the
/// client sent `Content-Encoding: deflate` or `gzip`), hashes and writes it to a temp file, then checks it
/// (complete, checksum, ELF, build id, kind) and commits it to the store, or refuses it and removes the file.
/// Memory stays bounded whatever the size. Disk too: a declared size (or `Content-Length`) over the limit is
/// refused (413) before the body is read, and writing stops as soon as the body passes its declared size or the
/// limit. Uploads never take the last `Limits.reserve` bytes of free space, which ingestion keeps: a declared size
/// that would is refused (507) before the body is read, and a body of unknown size stops (507) once it reaches
/// that floor (free space is read again every `recheckBytes`, so other writers count too). Runs on the
/// connection's thread only.
package final class DebugFileUpload: RequestBodySink {
    /// What an upload may do.
    struct Limits {
        /// Largest file, as stored (inflated).
        var maxBytes: Int64
        /// Whether it may replace a stored file of its build id and kind that has other bytes.
        var mayReplace: Bool
        /// Free space an upload leaves for ingestion (`CollectorConfiguration.diskReserveBytes`).
        var reserve: Int64 = 0
    }

    /// Free space is read again after this many bytes written: 4 MiB.
    static let recheckBytes: Int64 = 4 << 20

    /// After a refusal, the body is still read (so the client gets the answer) for this many more bytes: 64 MiB;
    /// past that the connection is dropped.
    package static let drainLimit: Int64 = 64 << 20

    private let store: DebugFileStore
    private let buildId: String
    private let kind: DebugFileKind
    private let release: String
    private let fileName: String
    private let expectedSHA: String?
    private let expectedSize: Int64?
    private let limits: Limits
    private let temporary: URL
    private var receivedAtFailure: Int64 = 0
    private var fd: Int32
    private let hash = Digest(.sha256)
    private var inflater: ZlibStream?
    private var written: Int64 = 0
    /// Bytes it may write before the free-space floor (read again every `recheckBytes`); nil when unknown.
    private var room: Int64?
    private var nextCheck: Int64 = 0
    private var received: Int64 = 0
    private var failure: DebugFileRejection?
    private var committed = false
    private var finished = false

    init(store: DebugFileStore, buildId: String, kind: DebugFileKind, request: HTTPRequest, limits: Limits)
        throws(DebugFileRejection)
    {
        self.store = store
        self.limits = limits
        self.buildId = buildId
        self.kind = kind
        release = request.query["release"] ?? ""
        fileName = (request.query["name"] ?? "").split(separator: "/").last.map(String.init) ?? ""
        expectedSHA = request.header(DebugFileHeader.sha256)?.lowercased()
        if let size = request.header(DebugFileHeader.size) {
            guard let value = Int64(size), value >= 0 else {
                throw DebugFileRejection(status: 400, description: "invalid \(DebugFileHeader.size): \(size)")
            }
            expectedSize = value
        } else {
            expectedSize = nil
        }
        let encoding = request.header("Content-Encoding")?.lowercased() ?? "identity"
        // The stored size when known before the body: the declared one, else an uncompressed body's length.
        let declared =
            expectedSize ?? (encoding == "identity" ? request.header("Content-Length").flatMap { Int64($0) } : nil)
        if let declared {
            try Self.checkRoom(
                for: declared, what: "upload", limit: limits.maxBytes, free: store.freeBytes(), reserve: limits.reserve)
        }
        if let expectedSHA, !limits.mayReplace,
            let refusal = store.replacementRefusal(buildId: buildId, kind: kind, sha256: expectedSHA)
        {
            throw refusal
        }
        switch encoding {
        case "identity", "": inflater = nil
        case "deflate", "gzip", "x-gzip":
            do {
                inflater = try ZlibStream(.inflate)
            } catch {
                throw DebugFileRejection(status: 500, description: error.description)
            }
        case let other:
            throw DebugFileRejection(
                status: 415, description: "unsupported Content-Encoding \(other) (use deflate, gzip or none)")
        }
        temporary = store.temporaryURL()
        fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DebugFileRejection(
                status: 500, description: "cannot create a temp file: \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        if fd >= 0 { close(fd) }
        if !committed { unlink(temporary.path) }
        // A body cut short (the client hung up) never reaches `finish`: counted as refused, once it is gone.
        if !finished { store.noteUpload(stored: false, bytesReceived: received) }
    }

    package func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        received += Int64(bytes.count)
        guard failure == nil else { return received - receivedAtFailure <= Self.drainLimit }
        if let inflater {
            do {
                try inflater.process(bytes) { write($0) }
            } catch {
                fail(400, "\(error)")
            }
        } else {
            write(bytes)
        }
        return true
    }

    package func finish(_ request: HTTPRequest) -> HTTPResponse? {
        let answer = conclude()
        finished = true
        store.noteUpload(stored: committed, bytesReceived: received)
        return answer
    }

    private func conclude() -> HTTPResponse {
        if failure == nil, let inflater {
            do {
                try inflater.finish { write($0) }
            } catch {
                fail(400, "\(error)")
            }
        }
        if failure == nil, let expectedSize, written != expectedSize {
            fail(400, "incomplete body: received \(written) bytes, \(DebugFileHeader.size) says \(expectedSize)")
        }
        var sha = ""
        do {
            sha = try hash.finalizeHex()
        } catch {
            fail(500, error.description)
        }
        if failure == nil, let expectedSHA, expectedSHA != sha {
            fail(400, "checksum mismatch: the body's SHA-256 is \(sha), \(DebugFileHeader.sha256) says \(expectedSHA)")
        }
        if failure == nil, fsync(fd) != 0 { fail(507, "cannot write: \(String(cString: strerror(errno)))") }
        close(fd)
        fd = -1
        if failure == nil {
            do {
                if kind == .symcache {
                    try DebugFileStore.verifySymbolCache(path: temporary.path, buildId: buildId)
                } else {
                    _ = try DebugFileStore.verify(path: temporary.path, buildId: buildId, kind: kind)
                }
            } catch let rejection as DebugFileRejection {
                failure = rejection
            } catch {
                fail(422, "\(error)")
            }
        }
        if let failure { return .error(failure.status, failure.description) }
        do {
            if kind == .symcache {  // kept beside the index (DebugFileStore+SymbolCache.swift)
                try store.commitSymbolCache(temporary: temporary, buildId: buildId)
                committed = true
                return .json(201, ["status": 1, "build_id": .string(buildId), "kind": .string(kind.rawValue)])
            }
            let stored = try store.commit(
                temporary: temporary, buildId: buildId, kind: kind, sha256: sha, size: written, release: release,
                fileName: fileName, mayReplace: limits.mayReplace)
            committed = true
            // The symbol cache the collector's symbolication reads (DebugFileStore+SymbolCache.swift): of a debug
            // file, or of an executable that still has DWARF (the CLI sends an unstripped binary once).
            store.makeSymbolCache(buildId: buildId, debugFile: store.objectURL(sha256: sha))
            return .json(
                201,
                [
                    "status": 1, "build_id": .string(stored.buildId), "kind": .string(stored.kind.rawValue),
                    "sha256": .string(stored.sha256), "size": .int(Int(stored.size)),
                    "bytes_received": .int(Int(received)),
                ])
        } catch let rejection as DebugFileRejection {
            return .error(rejection.status, rejection.description)
        } catch {
            return .error(500, "storage error: \(error)")
        }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, let base = bytes.baseAddress else { return }
        let after = written + Int64(bytes.count)
        if let expectedSize, after > expectedSize {
            return fail(413, "the body inflates past its declared \(DebugFileHeader.size) of \(expectedSize) bytes")
        }
        if after > limits.maxBytes {
            return fail(413, "upload too large: more than \(limits.maxBytes) bytes")
        }
        if after > nextCheck, let free = store.freeBytes() {
            room = written + free - limits.reserve
            nextCheck = written + Self.recheckBytes
        }
        if let room, after > room {
            return fail(
                507, Self.floorReason(needed: after, free: room - written + limits.reserve, reserve: limits.reserve))
        }
        hash.update(bytes)
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.write(fd, base + offset, bytes.count - offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let status = errno == ENOSPC ? 507 : 500
                fail(status, "cannot write: \(String(cString: strerror(errno)))")
                return
            }
            offset += count
        }
        written += Int64(bytes.count)
    }

    /// Why an upload stops at the free-space floor.
    /// Refuses a `what` of `size` bytes: 413 over `limit`, 507 when storing it would leave less than `reserve` of
    /// the `free` bytes (nil: unknown) for ingestion. The one check of direct and Sentry chunk uploads.
    package static func checkRoom(for size: Int64, what: String, limit: Int64, free: Int64?, reserve: Int64)
        throws(DebugFileRejection)
    {
        guard size <= limit else {
            throw DebugFileRejection(status: 413, description: "\(what) too large: \(size) bytes (limit \(limit))")
        }
        if let free, size > free - reserve {
            throw DebugFileRejection(status: 507, description: floorReason(needed: size, free: free, reserve: reserve))
        }
    }

    package static func floorReason(needed: Int64, free: Int64, reserve: Int64) -> String {
        "not enough free space: \(needed) bytes would leave under the \(reserve) bytes kept for ingestion "
            + "(\(max(0, free)) bytes free); free some space or lower --disk-reserve"
    }

    private func fail(_ status: Int, _ reason: String) {
        guard failure == nil else { return }
        failure = DebugFileRejection(status: status, description: reason)
        receivedAtFailure = received
        // Nothing more is written: what was is dropped now, not when the body ends.
        if fd >= 0 { _ = ftruncate(fd, 0) }
    }
}
