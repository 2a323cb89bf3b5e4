import CohorlyFiles
import CohorlySQLite
import CohorlySymbols
import Foundation

/// One stored (build id, kind) with the content it points at.
public struct StoredDebugFile: Sendable, Hashable {
    /// The GNU build id, lowercase hex.
    public var buildId: String
    /// What the file is for.
    public var kind: DebugFileKind
    /// SHA-256 of the content, lowercase hex (also its name in the store).
    public var sha256: String
    /// Size in bytes.
    public var size: Int64
    /// The releases it was uploaded for (sorted; empty when uploaded without one).
    public var releases: [String]
    /// The file name the uploader gave (no directory), or empty.
    public var fileName: String
    /// When it was first stored, unix milliseconds.
    public var uploadedAt: Int64
}

/// Why an upload or a check was refused (the 4xx JSON `error`).
public struct DebugFileRejection: Error, Sendable, CustomStringConvertible {
    /// The HTTP status to answer with (400, 409, 422, …).
    public var status: Int
    /// A readable reason.
    public var description: String

    package init(status: Int, description: String) {
        self.status = status
        self.description = description
    }
}

/// The collector's debug files: content-addressed by SHA-256 under `<root>/objects/<aa>/<sha256>`, written
/// atomically (temp file, fsync, rename, fsync of the directory), indexed by (build id, kind, sha256, release)
/// in `<root>/index.sqlite`. Both the executable and the debug file of one build id are kept. Thread-safe.
public final class DebugFileStore: @unchecked Sendable {
    /// The store's directory (`<data>/debug-files`, or a private temp directory for a memory-only collector).
    public let root: URL
    private let ownsRoot: Bool
    private let lock = NSLock()
    private let db: SQLiteDatabase
    private let counters = Counters()

    /// Opens or creates the store in `directory`; nil makes a private temp directory removed on deinit.
    public init(directory: URL?) throws {
        if let directory {
            root = directory
            ownsRoot = false
        } else {
            Self.removeAbandonedTemporaryStores()
            root = FileManager.default.temporaryDirectory.appendingPathComponent(
                "\(Self.temporaryPrefix)\(getpid())-\(UUID().uuidString)")
            ownsRoot = true
        }
        for sub in ["objects", "tmp", "chunks"] {
            try PrivateFiles.makeDirectory(root.appendingPathComponent(sub).path)
        }
        db = try SQLiteDatabase(path: root.appendingPathComponent("index.sqlite").path)
        try db.execute(
            """
            PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
            CREATE TABLE IF NOT EXISTS debug_files(
                build_id TEXT NOT NULL, kind TEXT NOT NULL, sha256 TEXT NOT NULL, size INTEGER NOT NULL,
                release TEXT NOT NULL, file_name TEXT NOT NULL, uploaded_at INTEGER NOT NULL,
                UNIQUE(build_id, kind, sha256, release));
            CREATE INDEX IF NOT EXISTS debug_files_sha256 ON debug_files(sha256);
            """
        )
        // Temp files of uploads cut short by a crash or a kill are never committed: drop them.
        let temp = root.appendingPathComponent("tmp")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temp.path)) ?? [] {
            try? FileManager.default.removeItem(at: temp.appendingPathComponent(name))
        }
    }

    deinit {
        if ownsRoot { try? FileManager.default.removeItem(at: root) }
    }

    private static let temporaryPrefix = "cohorly-debug-files-"

    /// Temp stores of processes that ended without releasing their collector (killed, crashed).
    private static func removeAbandonedTemporaryStores() {
        let temporary = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        where name.hasPrefix(temporaryPrefix) {
            guard let pid = name.dropFirst(temporaryPrefix.count).split(separator: "-").first.flatMap({ Int32($0) }),
                pid != getpid(), kill(pid, 0) != 0, errno == ESRCH
            else { continue }
            try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
        }
    }

    /// The stored file for `buildId` (hex, any case) and `kind`, or nil when none was uploaded. Other bytes for a
    /// stored pair are refused unless replaced on purpose (then the newest wins). (`cohorly debug-files upload` records an unstripped binary under both kinds.)
    public func debugFile(buildId: String, kind: DebugFileKind) -> URL? {
        guard let id = Self.normalizedBuildId(buildId), let sha = latestSHA(buildId: id, kind: kind) else {
            return nil
        }
        let url = objectURL(sha256: sha)
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    /// Every stored (build id, kind), newest first.
    public func list() throws -> [StoredDebugFile] {
        try lock.withLock {
            var byKey: [String: StoredDebugFile] = [:]
            var order: [String] = []
            try db.prepare(
                "SELECT build_id, kind, sha256, size, release, file_name, uploaded_at FROM debug_files ORDER BY rowid DESC"
            ).rows { row in
                let buildId = row.text(0) ?? ""
                let kind = DebugFileKind(rawValue: row.text(1) ?? "") ?? .debuginfo
                let sha = row.text(2) ?? ""
                let key = buildId + "/" + kind.rawValue + "/" + sha
                let release = row.text(4) ?? ""
                if var existing = byKey[key] {
                    if !release.isEmpty { existing.releases.append(release) }
                    existing.uploadedAt = min(existing.uploadedAt, row.int(6))
                    byKey[key] = existing
                } else {
                    order.append(key)
                    byKey[key] = StoredDebugFile(
                        buildId: buildId, kind: kind, sha256: sha, size: row.int(3),
                        releases: release.isEmpty ? [] : [release], fileName: row.text(5) ?? "",
                        uploadedAt: row.int(6))
                }
                return true
            }
            return order.compactMap { key in
                byKey[key].map {
                    var file = $0
                    file.releases.sort()
                    return file
                }
            }
        }
    }

    /// Upload counters (bytes received on the wire and stored), for tests and `/api/debug-files`.
    public var statistics: Statistics { counters.snapshot() }

    /// What the store received so far.
    public struct Statistics: Sendable, Equatable {
        /// Uploads stored.
        public var uploadsStored = 0
        /// Uploads refused.
        public var uploadsRefused = 0
        /// Request body bytes received by uploads (compressed as sent).
        public var bytesReceived: Int64 = 0
    }

    // MARK: - Used by the routes

    /// Where the content with this hash lives (whether or not it exists).
    package func objectURL(sha256: String) -> URL {
        root.appendingPathComponent("objects").appendingPathComponent(String(sha256.prefix(2)))
            .appendingPathComponent(sha256)
    }

    /// Where a chunk of a wire's chunk upload (Sentry's) is kept until its file is assembled.
    package func chunkURL(sha1: String) -> URL {
        root.appendingPathComponent("chunks").appendingPathComponent(sha1)
    }

    /// A new temp file path for an upload in progress.
    package func temporaryURL() -> URL {
        root.appendingPathComponent("tmp").appendingPathComponent(UUID().uuidString)
    }

    /// Whether (build id, kind, sha256) is stored; when the content is stored under another build id or kind
    /// (or not at all for this pair) but fits, the pair is recorded too. Attaches `release` when stored.
    package func checkAndAttach(buildId: String, kind: DebugFileKind, sha256: String, release: String) throws -> Bool {
        if kind == .symcache { return symbolCache(buildId: buildId) != nil }  // any cache of the build serves
        let object = objectURL(sha256: sha256)
        guard FileManager.default.fileExists(atPath: object.path) else { return false }
        let known = try lock.withLock { () -> (size: Int64, name: String)? in
            var found: (Int64, String)?
            try db.prepare("SELECT size, file_name FROM debug_files WHERE sha256 = ? AND build_id = ? AND kind = ?")
                .rows([.text(sha256), .text(buildId), .text(kind.rawValue)]) { row in
                    found = (row.int(0), row.text(1) ?? "")
                    return false
                }
            return found
        }
        if let known {
            try record(
                buildId: buildId, kind: kind, sha256: sha256, size: known.size, release: release,
                fileName: known.name)
            return true
        }
        // Same content as another stored pair (an unstripped binary is both executable and debuginfo), unless the
        // pair already has other bytes (never replaced by a check).
        guard replacementRefusal(buildId: buildId, kind: kind, sha256: sha256) == nil,
            (try? Self.verify(path: object.path, buildId: buildId, kind: kind)) != nil
        else { return false }
        var info = stat()
        let size = stat(object.path, &info) == 0 ? Int64(info.st_size) : 0
        let name = try lock.withLock {
            var name = ""
            try db.prepare("SELECT file_name FROM debug_files WHERE sha256 = ? ORDER BY rowid LIMIT 1").rows([
                .text(sha256)
            ]) { row in
                name = row.text(0) ?? ""
                return false
            }
            return name
        }
        try record(buildId: buildId, kind: kind, sha256: sha256, size: size, release: release, fileName: name)
        return true
    }

    /// What `freeBytes()` answers instead of the file system's figure (tests: a disk about to fill up).
    var freeBytesOverride: (@Sendable () -> Int64?)? {
        get { lock.withLock { override } }
        set { lock.withLock { override = newValue } }
    }
    private var override: (@Sendable () -> Int64?)?

    /// Bytes free for uploads where they are written (nil when unknown).
    package func freeBytes() -> Int64? {
        if let override = freeBytesOverride { return override() }
        var info = statvfs()
        guard statvfs(root.appendingPathComponent("tmp").path, &info) == 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(
            by: Int64(clamping: info.f_frsize))
        return overflow ? Int64.max : bytes
    }

    /// The refusal (409) when (build id, kind) is stored with other bytes than `sha256`: a stored file is replaced
    /// only when the uploader may (`Limits.mayReplace`). Nil when nothing or the same bytes are stored.
    package func replacementRefusal(buildId: String, kind: DebugFileKind, sha256: String) -> DebugFileRejection? {
        guard let current = latestSHA(buildId: buildId, kind: kind), current != sha256 else { return nil }
        return Self.replacementRejection(buildId: buildId, kind: kind, current: current)
    }

    private static func replacementRejection(buildId: String, kind: DebugFileKind, current: String)
        -> DebugFileRejection
    {
        DebugFileRejection(
            status: 409,
            description: "build id \(buildId) already has \(withArticle(kind.rawValue)) with other bytes (sha256 "
                + "\(current)); to replace it (a stripped copy uploaded by mistake?), upload again with "
                + "`cohorly debug-files upload --force` (X-Cohorly-Replace: 1)")
    }

    /// Moves a verified, fsynced temp file into place under its hash and records it; refuses (409) to replace a
    /// stored file of the same build id and kind with other bytes unless `mayReplace`.
    package func commit(
        temporary: URL, buildId: String, kind: DebugFileKind, sha256: String, size: Int64, release: String,
        fileName: String, mayReplace: Bool = false
    ) throws -> StoredDebugFile {
        if !mayReplace, let refusal = replacementRefusal(buildId: buildId, kind: kind, sha256: sha256) {
            throw refusal  // before the bytes are moved in (the insert checks again, under its lock)
        }
        let object = objectURL(sha256: sha256)
        let directory = object.deletingLastPathComponent()
        try PrivateFiles.makeDirectory(directory.path)
        if FileManager.default.fileExists(atPath: object.path) {
            // Same hash, same bytes: keep the stored copy.
            try? FileManager.default.removeItem(at: temporary)
        } else {
            guard rename(temporary.path, object.path) == 0 else {
                throw DebugFileRejection(status: 500, description: "cannot store: \(String(cString: strerror(errno)))")
            }
            Self.fsyncDirectory(directory)
        }
        try record(
            buildId: buildId, kind: kind, sha256: sha256, size: size, release: release, fileName: fileName,
            unlessReplacing: !mayReplace)
        return StoredDebugFile(
            buildId: buildId, kind: kind, sha256: sha256, size: size, releases: release.isEmpty ? [] : [release],
            fileName: fileName, uploadedAt: Self.now())
    }

    package func noteUpload(stored: Bool, bytesReceived: Int64) {
        counters.add(stored: stored, bytes: bytesReceived)
    }

    /// Checks that the file at `path` is an ELF file with GNU build id `buildId` that fits `kind`: debuginfo
    /// needs DWARF, executable needs code. Returns what was read.
    package static func verify(path: String, buildId: String, kind: DebugFileKind) throws -> ObjectInfo {
        let info: ObjectInfo
        do {
            info = try ObjectInfo(path: path)
        } catch {
            switch error {
            case .notELF: throw DebugFileRejection(status: 422, description: "not an ELF file")
            case .emptyFile: throw DebugFileRejection(status: 422, description: "empty body")
            default: throw DebugFileRejection(status: 422, description: "unreadable ELF file: \(error)")
            }
        }
        guard let actual = info.codeId else {
            throw DebugFileRejection(status: 422, description: "the file has no GNU build id")
        }
        guard actual == buildId else {
            throw DebugFileRejection(
                status: 422, description: "build id mismatch: the URL claims \(buildId), the file has \(actual)")
        }
        switch kind {
        case .debuginfo:
            guard info.hasDebugInfo else {
                throw DebugFileRejection(
                    status: 422, description: "kind debuginfo, but the file has no DWARF debug info")
            }
        case .executable:
            guard info.kind == .executable || info.kind == .sharedLibrary else {
                throw DebugFileRejection(
                    status: 422,
                    description: "kind executable, but the file is \(withArticle(info.kind.rawValue)) without code")
            }
        case .symcache:
            throw DebugFileRejection(status: 422, description: "kind symcache, but the file is an ELF file")
        }
        return info
    }

    /// Lowercase hex of 8…128 digits (an even count), or nil.
    package static func normalizedBuildId(_ text: String) -> String? {
        let lower = text.lowercased()
        guard lower.utf8.count >= 8, lower.utf8.count <= 128, lower.utf8.count % 2 == 0,
            lower.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return lower
    }

    /// Lowercase hex of exactly 64 digits (it names a file in the store), or nil.
    package static func normalizedSHA256(_ text: String) -> String? {
        let lower = text.lowercased()
        guard lower.utf8.count == 64,
            lower.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        return lower
    }

    static func fsyncDirectory(_ directory: URL) {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Records (build id, kind, sha256, release); with `unlessReplacing`, throws the refusal instead when the pair
    /// holds other bytes, checked under the same lock as the insert (two racing uploads cannot both pass).
    private func record(
        buildId: String, kind: DebugFileKind, sha256: String, size: Int64, release: String, fileName: String,
        unlessReplacing: Bool = false
    ) throws {
        try lock.withLock {
            if unlessReplacing, let current = latestSHAUnlocked(buildId: buildId, kind: kind), current != sha256 {
                throw Self.replacementRejection(buildId: buildId, kind: kind, current: current)
            }
            try db.prepare(
                "INSERT OR IGNORE INTO debug_files(build_id, kind, sha256, size, release, file_name, uploaded_at) VALUES (?,?,?,?,?,?,?)"
            ).run([
                .text(buildId), .text(kind.rawValue), .text(sha256), .int(size), .text(release), .text(fileName),
                .int(Self.now()),
            ])
        }
    }

    private func latestSHA(buildId: String, kind: DebugFileKind) -> String? {
        lock.withLock { latestSHAUnlocked(buildId: buildId, kind: kind) }
    }

    private func latestSHAUnlocked(buildId: String, kind: DebugFileKind) -> String? {
        var sha: String?
        let sql = "SELECT sha256 FROM debug_files WHERE build_id = ? AND kind = ? ORDER BY rowid DESC LIMIT 1"
        try? db.prepare(sql).rows([.text(buildId), .text(kind.rawValue)]) { row in
            sha = row.text(0)
            return false
        }
        return sha
    }

    private final class Counters: @unchecked Sendable {
        private let lock = NSLock()
        private var value = Statistics()
        func add(stored: Bool, bytes: Int64) {
            lock.withLock {
                if stored { value.uploadsStored += 1 } else { value.uploadsRefused += 1 }
                value.bytesReceived += bytes
            }
        }
        func snapshot() -> Statistics { lock.withLock { value } }
    }
}

/// `word` after its indefinite article: "an executable", "a debuginfo".
func withArticle(_ word: String) -> String {
    (word.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + word
}
