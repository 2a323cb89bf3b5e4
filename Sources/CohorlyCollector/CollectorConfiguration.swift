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
    /// Largest accepted body in bytes; larger gets 413. Default 1 MiB (1,048,576).
    public var maxBodyBytes: Int = 1 << 20
    /// Most records per request; more gets 400. Default 500.
    public var maxRecords: Int = 500
    /// Memory per connection, which bounds request headers (larger headers get 4xx from the server). Default 64 KiB.
    public var connectionMemoryLimit: Int = 64 << 10
    /// Idle connection timeout in seconds. Default 30.
    public var connectionTimeout: UInt32 = 30

    /// The defaults.
    public init() {}

    /// The state directory used by `cohorly serve` without `--data`: `$XDG_STATE_HOME/cohorly/collector`.
    public static func defaultDataDirectory() -> URL {
        if let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"], !state.isEmpty {
            return URL(fileURLWithPath: state).appendingPathComponent("cohorly/collector")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
            ".local/state/cohorly/collector")
    }

    func accepts(token: String) -> Bool {
        tokens.isEmpty ? !token.isEmpty : tokens.contains(token)
    }
}
