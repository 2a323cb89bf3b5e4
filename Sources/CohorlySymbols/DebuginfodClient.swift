import CDebuginfod

#if canImport(Glibc)
    import Glibc
#endif

/// Fetches debug files and executables by build id from the debuginfod servers in `DEBUGINFOD_URLS`, through
/// elfutils' libdebuginfod (which also honours `DEBUGINFOD_CACHE_PATH`, `DEBUGINFOD_TIMEOUT`, … and caches
/// downloads). All fetches of one client share a time budget (``timeBudget``): a server that does not answer
/// costs at most that much in total, not libdebuginfod's 90 s per transfer. Not thread-safe: use one client
/// per thread.
public final class DebuginfodClient {
    /// The default of ``timeBudget``: 10 seconds, unless `COHORLY_DEBUGINFOD_TIMEOUT` (seconds) says otherwise.
    public static let defaultTimeBudget = 10.0

    /// How many seconds all fetches of this client may take together; once spent, ``fetch(buildId:kind:)``
    /// answers nil at once. Default ``defaultTimeBudget`` (or `COHORLY_DEBUGINFOD_TIMEOUT`).
    public var timeBudget: Double
    /// Seconds spent fetching so far.
    public private(set) var timeSpent = 0.0
    /// Told what is fetched before each fetch, and when the budget runs out (e.g. printed on stderr by a CLI).
    public var log: ((String) -> Void)?

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
        let budget = getenv("COHORLY_DEBUGINFOD_TIMEOUT").flatMap { Double(String(cString: $0)) }
        return DebuginfodClient(
            urls: urls, client: client,
            timeBudget: budget.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil } ?? defaultTimeBudget)
    }

    private init(urls: [String], client: OpaquePointer, timeBudget: Double) {
        self.urls = urls
        self.client = client
        self.timeBudget = timeBudget
    }

    deinit {
        cly_debuginfod_end(client)
    }

    /// The path of the downloaded (or cached) file, or nil when no server has it or the time budget is spent.
    public func fetch(buildId: [UInt8], kind: Kind) -> String? {
        let remaining = timeBudget - timeSpent
        guard remaining > 0 else { return nil }
        let what = kind == .debuginfo ? "debug file" : "executable"
        log?(
            "fetching the \(what) of build id \(DebugId.codeId(buildId)) from debuginfod (\(urls.joined(separator: " ")))"
                + ", up to \(Self.seconds(remaining)) s")
        guard cly_debuginfod_set_deadline(client, Int64(min(remaining * 1000, 1e15))) != 0 else { return nil }
        let start = Self.now()
        defer {
            timeSpent += Self.now() - start
            if timeSpent >= timeBudget {
                log?(
                    "debuginfod: no more fetches, the time budget of \(Self.seconds(timeBudget)) s is spent"
                        + " (COHORLY_DEBUGINFOD_TIMEOUT sets it)")
            }
        }
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

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func seconds(_ value: Double) -> String {
        String(describing: (value * 10).rounded() / 10)
    }
}
