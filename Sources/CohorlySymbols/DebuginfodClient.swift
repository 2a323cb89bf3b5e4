import CDebuginfod

#if canImport(Glibc)
    import Glibc
#endif

/// Fetches debug files and executables by build id from the debuginfod servers in `DEBUGINFOD_URLS`, through
/// elfutils' libdebuginfod (which also honours `DEBUGINFOD_CACHE_PATH`, `DEBUGINFOD_TIMEOUT`, … and caches
/// downloads). Not thread-safe: use one client per thread.
public final class DebuginfodClient {
    /// What to fetch.
    public enum Kind: Sendable {
        /// `/buildid/<id>/debuginfo`.
        case debuginfo
        /// `/buildid/<id>/executable`.
        case executable
    }

    /// The server URLs, as read from `DEBUGINFOD_URLS`.
    public let urls: [String]
    private let client: OpaquePointer

    /// A client for the servers in `DEBUGINFOD_URLS`, or nil when it is unset or empty.
    public static func fromEnvironment() -> DebuginfodClient? {
        guard let value = getenv("DEBUGINFOD_URLS") else { return nil }
        let urls = String(cString: value).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(
            String.init)
        guard !urls.isEmpty, let client = cly_debuginfod_begin() else { return nil }
        return DebuginfodClient(urls: urls, client: client)
    }

    private init(urls: [String], client: OpaquePointer) {
        self.urls = urls
        self.client = client
    }

    deinit {
        cly_debuginfod_end(client)
    }

    /// The path of the downloaded (or cached) file, or nil when no server has it.
    public func fetch(buildId: [UInt8], kind: Kind) -> String? {
        var path: UnsafeMutablePointer<CChar>?
        let fd = buildId.withUnsafeBufferPointer { bytes -> Int32 in
            guard let base = bytes.baseAddress else { return -1 }
            switch kind {
            case .debuginfo: return cly_debuginfod_find_debuginfo(client, base, Int32(bytes.count), &path)
            case .executable: return cly_debuginfod_find_executable(client, base, Int32(bytes.count), &path)
            }
        }
        guard fd >= 0 else { return nil }
        close(fd)
        guard let path else { return nil }
        defer { free(path) }
        return String(cString: path)
    }
}
