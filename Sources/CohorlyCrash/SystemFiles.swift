#if canImport(Glibc)
    import Glibc
#endif

/// Small, Foundation-free file helpers for the install path (install must stay cheap: no Foundation
/// start-up cost in apps that do not use Foundation yet).
enum SystemFiles {
    /// The text of a small file (at most `limit` bytes, read in 4 KiB steps), or nil when it cannot be read.
    static func read(_ path: String, limit: Int = 1 << 20) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 8) { chunk in
            while bytes.count < limit {
                let n = Glibc.read(fd, chunk.baseAddress, chunk.count)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[..<n]))
            }
        }
        return String(decoding: bytes.prefix(limit), as: UTF8.self)
    }

    /// Creates `path` and its missing parents with `mode`. Returns nil or the reason it failed.
    static func makeDirectories(_ path: String, mode: mode_t) -> String? {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                return "cannot create \(prefix): \(String(cString: strerror(errno)))"
            }
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            return "not a directory"
        }
        return nil
    }

    /// The environment variable, or nil.
    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
