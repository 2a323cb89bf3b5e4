#if canImport(Glibc)
    import Glibc
#endif

/// A regular file opened for reading. Anything else a path can name — a FIFO, a socket, a device, a
/// directory — is refused at once, before any blocking read: the path is checked with `stat` (so a device
/// is not even opened), opened with `O_NONBLOCK` (so a FIFO swapped in meanwhile cannot block the open), and
/// the open descriptor is checked again with `fstat`. Every command and library path that reads a file named
/// by a user or by input (ELF files, reports, uploads) opens it through this type. Closes the descriptor when
/// released.
public final class RegularFile: Sendable {
    /// The path as given.
    public let path: String
    /// The open descriptor (read-only, close-on-exec); valid while the object lives.
    public let descriptor: Int32
    /// The file's size in bytes when it was opened.
    public let size: UInt64

    /// Opens `path` for reading (symlinks are followed).
    /// - Throws: ``SymbolsError/cannotOpen(path:reason:)`` (missing, no permission, …) or
    ///   ``SymbolsError/notARegularFile(path:)``.
    public init(path: String) throws(SymbolsError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(path: path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .notARegularFile(path: path)
        }
        self.path = path
        self.descriptor = fd
        self.size = UInt64(clamping: info.st_size)
    }

    deinit { close(descriptor) }

    /// The whole file, or ``SymbolsError/tooLarge(path:limit:)`` when it holds more than `limit` bytes (checked
    /// before reading, and again while reading, so a file that grows is not read past the limit).
    public func readAll(limit: Int) throws(SymbolsError) -> [UInt8] {
        let limit = max(0, limit)
        guard size <= UInt64(limit) else { throw .tooLarge(path: path, limit: limit) }
        var result: [UInt8] = []
        result.reserveCapacity(Int(size))
        var overflow = false
        try forEachChunk(size: 1 << 16) { chunk in
            guard result.count + chunk.count <= limit else {
                overflow = true
                return false
            }
            result += chunk
            return true
        }
        if overflow { throw .tooLarge(path: path, limit: limit) }
        return result
    }

    /// Reads the file from its start in pieces of at most `chunk` bytes, calling `body` with each until the end
    /// or until `body` returns false.
    /// - Throws: ``SymbolsError/cannotOpen(path:reason:)`` when a read fails.
    public func forEachChunk(size chunk: Int = 1 << 20, _ body: (UnsafeRawBufferPointer) -> Bool)
        throws(SymbolsError)
    {
        var buffer = [UInt8](repeating: 0, count: max(1, chunk))
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .cannotOpen(path: path, reason: String(cString: strerror(errno))) }
            if count == 0 { return }
            let more = buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            guard more else { return }
            offset += off_t(count)
        }
    }
}
