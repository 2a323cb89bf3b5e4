import CohorlyFiles
import CohorlySymbols
import Foundation

/// The store's symbol caches (docs/symbol-cache.md), one per build id under `<root>/caches/<build id>.symcache`,
/// outside the index (a cache is the store's own, made from a debug file; not one of the files uploaded for a
/// release): made by the collector when a debug file is uploaded, or taken as uploaded (`cohorly debug-files
/// upload --include-cache`, kind `symcache`), and read by the collector's symbolication instead of the debug
/// file's DWARF.
extension DebugFileStore {
    /// The symbol cache of `buildId` (lowercase hex), or nil when there is none.
    public func symbolCache(buildId: String) -> URL? {
        let url = cacheURL(buildId: buildId)
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }

    private func cacheURL(buildId: String) -> URL {
        root.appendingPathComponent("caches").appendingPathComponent(buildId + ".symcache")
    }

    /// Moves a verified cache (a temp file) into place for `buildId`, replacing the one there.
    func commitSymbolCache(temporary: URL, buildId: String) throws {
        let target = cacheURL(buildId: buildId)
        let directory = target.deletingLastPathComponent()
        try PrivateFiles.makeDirectory(directory.path)
        guard rename(temporary.path, target.path) == 0 else {
            throw DebugFileRejection(status: 500, description: "cannot store: \(String(cString: strerror(errno)))")
        }
        Self.fsyncDirectory(directory)
    }

    /// Makes and stores the symbol cache of the debug file just stored at `debugFile` for `buildId`, unless one
    /// is stored already. Returns whether one is stored now. A file whose cache cannot be made keeps answering
    /// from its DWARF.
    @discardableResult
    func makeSymbolCache(buildId: String, debugFile: URL) -> Bool {
        if symbolCache(buildId: buildId) != nil { return true }
        guard let symbolicator = try? ModuleSymbolicator(debugFile: debugFile.path), symbolicator.hasDWARF,
            let bytes = try? SymbolCacheWriter.make(symbolicator, buildId: DebugId.buildId(hex: buildId))
        else { return false }
        let temporary = temporaryURL()
        do {
            guard Self.writePrivately(bytes, to: temporary.path) else {
                throw DebugFileRejection(status: 507, description: "")
            }
            try commitSymbolCache(temporary: temporary, buildId: buildId)
            return true
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            return false
        }
    }

    /// Checks that the file at `path` is a symbol cache made for `buildId` (an upload of kind `symcache`).
    static func verifySymbolCache(path: String, buildId: String) throws {
        let made: [UInt8]
        do {
            made = try SymbolCacheFile.buildId(at: path)
        } catch {
            throw DebugFileRejection(status: 422, description: "\(error)")
        }
        guard DebugId.codeId(made) == buildId else {
            throw DebugFileRejection(
                status: 422,
                description: "build id mismatch: the URL claims \(buildId), the cache is of \(DebugId.codeId(made))")
        }
    }

    /// Writes `bytes` to a new owner-only file at `path`, fsynced; false when that fails.
    private static func writePrivately(_ bytes: [UInt8], to path: String) -> Bool {
        guard let descriptor = try? PrivateFiles.openPrivate(path, O_WRONLY | O_CREAT | O_EXCL) else { return false }
        defer { close(descriptor) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { all in
                all.baseAddress.map { write(descriptor, $0 + written, all.count - written) } ?? -1
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return fsync(descriptor) == 0
    }
}
