import CohorlyFiles
import Foundation

/// How a collector listens, stores and checks requests. Defaults follow the public Cohorly limits.
public struct CollectorConfiguration: Sendable {
    /// TCP port; 0 picks a free one (read it back from `Collector.port`). Default 0.
    public var port: UInt16 = 0
    /// IPv4 address to bind. Default `127.0.0.1` (loopback only).
    public var bindAddress: String = "127.0.0.1"
    /// Where the SQLite database lives; nil keeps everything in memory. Default nil.
    public var dataDirectory: URL?
    /// Accepted project tokens; empty accepts any token (but a token is still required). Default empty.
    public var tokens: Set<String> = []
    /// When set, `/api/*` and `/admin/*` need `Authorization: Bearer <adminToken>`. Default nil (open).
    public var adminToken: String?
    /// The secret `GET /flags/local-evaluation` needs (`Authorization: Bearer`); nil: `adminToken`. Default nil.
    public var flagSecret: String?
    /// Largest accepted body in bytes; larger gets 413. Default 1 MiB (1,048,576).
    public var maxBodyBytes: Int = 1 << 20
    /// Most records per request; more gets 400. Default 500.
    public var maxRecords: Int = 500
    /// Memory per connection, which bounds request headers (larger headers get 4xx from the server). Default 64 KiB.
    public var connectionMemoryLimit: Int = 64 << 10
    /// Per-IP rate limit on `/track` and `/engage` (hosted Cohorly: 100 requests per 10 s); over it the answer is
    /// `429` with `Retry-After`. Default nil (off, so local benchmarks are not throttled).
    public var rateLimit: RateLimit?
    /// Idle connection timeout in seconds. Default 30.
    public var connectionTimeout: UInt32 = 30
    /// Connections one client address may hold open at once; more are closed at once. Default 32.
    public var connectionsPerClient: UInt32 = 32
    /// Open connections in all (a thread each). At the cap a new connection replaces one that is only waiting for
    /// its request headers (from the address holding the most connections), so slow clients cannot fill the
    /// server; with none to replace it is closed at once. Lowered to what the open-file limit allows. Default 512.
    public var maxConnections: Int = 512
    /// Seconds a connection has to send its request headers (each request's, on a kept-alive connection); then it
    /// is closed. Default 10.
    public var headerDeadline: Double = 10
    /// Bytes per second a request body must average once its first `headerDeadline` seconds have passed; a slower
    /// one (a body trickled in to hold a connection) has its connection closed. 0 turns the check off. Default
    /// 1,024 (1 KiB/s: any real client is far faster).
    public var minimumBodyRate: Double = 1024
    /// Largest debug-file upload in bytes, as stored (inflated); larger is refused with 413, from the declared
    /// size before the body is read, else as soon as it passes. Default 4 GiB (4,294,967,296).
    public var maxUploadBytes: Int64 = 4 << 30
    /// Memory (bytes) for request bodies being inflated and parsed at once, across all connections: a body is
    /// measured first and parsed only when its estimated tree fits (ParseBudget); one that never could gets 413,
    /// one that finds the budget taken for 2 s gets 503 with `Retry-After: 1`. Default 128 MiB (134,217,728).
    public var parseBudgetBytes: Int = 128 << 20
    /// Free space (bytes) debug-file uploads leave on the data directory's file system for ingestion: an upload
    /// that would go below it is refused, or stopped once it gets there, with 507 and the reason. Default 256 MiB
    /// (268,435,456).
    public var diskReserveBytes: Int64 = 256 << 20
    /// Host names the collector answers to besides its bind address and `localhost` (e.g. a CI service name);
    /// requests naming any other `Host` get 421. Default none.
    public var allowedHosts: [String] = []
    /// Which requests are logged: none, the refused ones (status 400 and up, or dropped), or all. Default `.none`
    /// (`cohorly serve` logs the refused ones).
    public var requestLog: RequestLogLevel = .none
    /// Where log lines go; nil writes them to standard error. Default nil.
    public var logHandler: (@Sendable (String) -> Void)?

    /// Directories searched (recursively, by build id) for debug files when crashes are symbolicated, after
    /// the uploaded ones; the collector opens no other path for symbolication (never a path a crash names).
    /// Default none.
    public var extraDebugFileDirectories: [String] = []

    /// Whether `$exception` events are grouped into issues as they arrive (docs/issues.md). Default true; off
    /// (`cohorly serve --no-issues`) only to measure what grouping costs.
    public var groupsIssues = true

    /// Whether the web pages may change issues: resolve, reopen and mute forms (`cohorly serve --web-actions`,
    /// docs/web.md). Default false: the pages only read (the CLI and `POST /api/issues/…` still change them).
    public var webActions = false

    /// The defaults.
    public init() {}

    /// The state directory used by `cohorly serve` without `--data`: `$XDG_STATE_HOME/cohorly/collector`, else
    /// `$HOME/.local/state/cohorly/collector` (the same resolution as the client and the recorder).
    public static func defaultDataDirectory() -> URL {
        URL(fileURLWithPath: StateDirectory.cohorly("collector"), isDirectory: true)
    }

    /// A request budget per client address over a sliding window.
    public struct RateLimit: Sendable, Equatable {
        /// Requests allowed per window.
        public var requests: Int
        /// Window length in seconds.
        public var window: Double

        /// The hosted service's documented limit: 100 requests per 10 s.
        public static let cohorly = RateLimit(requests: 100, window: 10)

        /// A limit of `requests` per `window` seconds.
        public init(requests: Int, window: Double) {
            self.requests = requests
            self.window = window
        }

        /// The ranges `init?(_:)` accepts: 1…1,000,000 requests per 0.001…86,400 seconds.
        public static let requestRange = 1...1_000_000
        /// See `requestRange`.
        public static let windowRange = 0.001...86_400.0

        /// Parses `N/SECONDS`, e.g. `100/10`; nil for anything else, or out of `requestRange` / `windowRange`
        /// (`1/inf`, `1/1e19`, `0/10`).
        public init?(_ text: String) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let requests = Int(parts[0]), let window = Double(parts[1]),
                Self.requestRange.contains(requests), window.isFinite, Self.windowRange.contains(window)
            else { return nil }
            self.init(requests: requests, window: window)
        }
    }

    /// Which requests a collector logs (the HTTP server's levels).
    public typealias RequestLogLevel = CohorlyHTTPServer.RequestLogLevel

    /// `maxConnections`, at most the open-file limit less 64 descriptors for files and the database.
    var effectiveMaxConnections: Int {
        var limit = rlimit()
        guard maxConnections > 0, getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return maxConnections }
        return max(1, min(maxConnections, Int(clamping: limit.rlim_cur) - 64))
    }

    package func accepts(token: String) -> Bool {
        tokens.isEmpty ? !token.isEmpty : tokens.contains(token)
    }
}
