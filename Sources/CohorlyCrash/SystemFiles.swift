#if canImport(Glibc)
    import Glibc
#endif

/// Small, Foundation-free file helpers for the install path (install must stay cheap: no Foundation
/// start-up cost in apps that do not use Foundation yet).
enum SystemFiles {
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
