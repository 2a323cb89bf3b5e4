import Foundation

/// The directories the collector was told to trust (`serve --debug-dir`), resolved once: a path is inside when its
/// real path (symbolic links resolved) lies under one of them and it is a regular file, so a crash event naming a
/// path can only make the collector read files it was given anyway, and never a FIFO, socket or device.
struct TrustedDirectories {
    private let roots: [String]

    init(_ directories: [String]) {
        roots = directories.compactMap { Self.realPath($0) }.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
    }

    /// Whether `path` is a regular file inside a trusted directory.
    func contains(_ path: String) -> Bool {
        guard !roots.isEmpty, let real = Self.realPath(path), roots.contains(where: { real.hasPrefix($0) }) else {
            return false
        }
        var info = stat()
        return stat(real, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
