#if canImport(Glibc)
    import Glibc
#endif

/// Small, Foundation-free file helpers for the install path (install must stay cheap: no Foundation
/// start-up cost in apps that do not use Foundation yet).
enum SystemFiles {
    /// The environment variable, or nil.
    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
