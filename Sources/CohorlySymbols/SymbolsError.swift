/// Why a file could not be read as an ELF object or symbolicated.
public enum SymbolsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path could not be opened (missing, dangling symlink, no permission, …); `reason` is `strerror`.
    case cannotOpen(path: String, reason: String)
    /// The path names a directory, FIFO, socket, device or another non-regular file (refused without reading).
    case notARegularFile(path: String)
    /// The file is empty.
    case emptyFile(path: String)
    /// The file holds more than `limit` bytes, the most the reader accepts.
    case tooLarge(path: String, limit: Int)
    /// The file does not start with the ELF magic.
    case notELF(path: String)
    /// The file starts like ELF but its headers are cut short or inconsistent (`reason` from libelf).
    case malformed(path: String, reason: String)
    /// The DWARF data could not be read (for example zstd-compressed sections under elfutils 0.188).
    case unreadableDebugInfo(path: String, reason: String)
    /// The symbol cache at `path` cannot be made or read: not a cache, another format version, cut short, or
    /// its tables out of the file.
    case badSymbolCache(path: String, reason: String)
    /// The symbol cache at `path` was made for another build (`cacheBuildId`) than `file` (`fileBuildId`, empty
    /// when the file has none).
    case symbolCacheMismatch(path: String, file: String, cacheBuildId: String, fileBuildId: String)

    /// The path the error is about.
    public var path: String {
        switch self {
        case .cannotOpen(let path, _), .notARegularFile(let path), .emptyFile(let path),
            .notELF(let path),
            .tooLarge(let path, _), .malformed(let path, _), .unreadableDebugInfo(let path, _),
            .badSymbolCache(let path, _), .symbolCacheMismatch(let path, _, _, _):
            return path
        }
    }

    /// A one-line reason that names the file.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): return "\(path): cannot open: \(reason)"
        case .notARegularFile(let path): return "\(path): not a regular file"
        case .emptyFile(let path): return "\(path): empty file"
        case .notELF(let path): return "\(path): not an ELF file"
        case .tooLarge(let path, let limit): return "\(path): larger than \(limit) bytes, refused"
        case .malformed(let path, let reason): return "\(path): malformed ELF file (\(reason))"
        case .unreadableDebugInfo(let path, let reason):
            return "\(path): unreadable debug info (\(reason))"
        case .badSymbolCache(let path, let reason): return "\(path): not a usable symbol cache (\(reason))"
        case .symbolCacheMismatch(let path, let file, let cacheBuildId, let fileBuildId):
            let fileId = fileBuildId.isEmpty ? "no build id" : "build id \(fileBuildId)"
            return
                "\(path): symbol cache of build id \(cacheBuildId), but \(file) has \(fileId): refused; make one for "
                + "this file with `cohorly debug-files cache \(file) -o \(path)`"
        }
    }
}
