import Foundation

/// The local collector: Cohorly's ingestion endpoints over HTTP (libmicrohttpd) with SQLite storage, a read API
/// and fault injection, for development and CI.
///
/// ```swift
/// let collector = try Collector(configuration: CollectorConfiguration())
/// let port = try collector.start()          // http://127.0.0.1:<port>
/// collector.injectFault(Fault(status: 503, retryAfter: "1"), count: 2)
/// ```
public final class Collector: Sendable {
    /// The configuration it runs with.
    public let configuration: CollectorConfiguration
    /// Its storage (read it directly in tests).
    public let store: CollectorStore
    /// Its debug files (`<data>/debug-files`, or a private temp directory without a data directory); look one
    /// up with `debugFiles.debugFile(buildId:kind:)`.
    public let debugFiles: DebugFileStore
    let faults = FaultInjector()
    /// Where the read API runs: below ingestion's CPU priority (ReadThreads.swift).
    private let reads: ReadThreads
    let web = WebSessions()
    private let server: HTTPServer
    private let directoryLock: DataDirectoryLock?
    private let portBox = PortBox()

    /// Opens the storage and locks the data directory (a second collector on it is refused until this one is
    /// released), answering the vendors' `wires` besides its own routes; call `start()` to listen. Throws
    /// `CollectorError` for an empty admin secret or a data directory in use. (`Collector(configuration:)`, module
    /// CohorlyCollector, passes every registered wire.)
    package init(configuration: CollectorConfiguration, wires: [any IngestionWire]) throws {
        if configuration.adminToken?.isEmpty == true { throw CollectorError.emptySecret }
        self.configuration = configuration
        // Ownership and modes are checked before anything in the directory is opened.
        if let directory = configuration.dataDirectory { try DataDirectoryCheck.verify(directory) }
        directoryLock = try configuration.dataDirectory.map { try DataDirectoryLock(directory: $0) }
        let store = try CollectorStore(directory: configuration.dataDirectory)
        self.store = store
        let debugFiles = try DebugFileStore(
            directory: configuration.dataDirectory?.appendingPathComponent("debug-files"))
        self.debugFiles = debugFiles
        let ingestion = Ingestion(
            store: store, configuration: configuration, budget: ParseBudget(capacity: configuration.parseBudgetBytes))
        let faults = self.faults
        let maxBody = configuration.maxBodyBytes
        let rateLimiter = configuration.rateLimit.map(RateLimiter.init)
        store.issues.configure(
            enabled: configuration.groupsIssues,
            symbolicator: IssueRegrouping.symbolicatorFactory(
                CrashQueries(
                    store: store, debugFiles: debugFiles, extraDirectories: configuration.extraDebugFileDirectories)))
        let router = Router(
            ingestion: ingestion, store: store, debugFiles: debugFiles, faults: faults, configuration: configuration,
            rateLimiter: rateLimiter, wires: wires, web: web)
        let reads = ReadThreads()
        self.reads = reads
        server = HTTPServer(
            maxBodyBytes: maxBody, log: RequestLog(level: configuration.requestLog, handler: configuration.logHandler),
            screener: { router.screen($0, port: $1) }, streamer: { router.stream($0) }
        ) { request in
            ReadThreads.serves(request) ? reads.run { router.route(request) } : router.route(request)
        }
    }

    /// Starts listening; returns the port (the chosen one when configured with 0).
    @discardableResult
    public func start() throws -> UInt16 {
        let port: UInt16
        do {
            port = try server.start(
                address: configuration.bindAddress, port: configuration.port,
                memoryLimit: configuration.connectionMemoryLimit,
                timeout: configuration.connectionTimeout, perClient: configuration.connectionsPerClient,
                headerDeadline: configuration.headerDeadline, minimumBodyRate: configuration.minimumBodyRate,
                maxConnections: configuration.effectiveMaxConnections)
        } catch let failure as HTTPServerError {
            throw CollectorError(failure)
        }
        portBox.set(port)
        web.listening(on: port)
        return port
    }

    /// A new login URL for the web pages (`<webURL>/login?token=…`): it works once, in one browser, which then
    /// holds a session for 12 hours (see docs/web.md). `cohorly serve` prints one when it starts.
    public func newLoginURL() -> URL {
        URL(string: "\(web.origin)/login?token=\(web.newLoginToken())") ?? baseURL
    }

    /// `http://cohorly-<32 random hex digits>.localhost:<port>`: where the web pages are, a host name of this
    /// collector alone (browsers resolve `*.localhost` to the loopback address), so that the session cookie goes
    /// to no other server on this machine (WebSessions.swift).
    public var webURL: URL { URL(string: web.origin) ?? baseURL }

    /// The listening port (0 before `start`).
    public var port: UInt16 { portBox.get() }

    /// `http://<bind address>:<port>`.
    public var baseURL: URL {
        URL(string: "http://\(configuration.bindAddress):\(port)") ?? URL(fileURLWithPath: "/")
    }

    deinit { stop() }

    /// Stops the server (storage stays readable) and frees the data directory for another collector. Safe to
    /// call twice.
    public func stop() {
        faults.cancelDelays()
        server.stop()
        reads.stop()
        directoryLock?.release()
    }

    /// Makes the next `count` ingestion answers misbehave as `fault` says (nothing is queued when that would make
    /// more than 10,000 pending faults).
    public func injectFault(_ fault: Fault, count: Int = 1) { faults.add(fault, count: count) }

    /// Removes faults not yet applied.
    public func clearFaults() { faults.clear() }

    /// Requests being held right now by an injected delay (with `afterInsert`, already stored).
    public var delayedRequestCount: Int { faults.delayingCount }

    /// Connections open right now (with a connection cap; 0 without).
    var openConnections: Int { server.headerDeadline?.openConnections ?? 0 }

    /// Connections waiting for request headers right now (with a header deadline or a cap; 0 without).
    var connectionsWaitingForHeaders: Int { server.headerDeadline?.waitingForHeaders ?? 0 }

    /// How many faults were applied so far.
    public var appliedFaultCount: Int { faults.applied }

    private final class PortBox: @unchecked Sendable {
        private let lock = NSLock()
        private var port: UInt16 = 0
        func set(_ value: UInt16) { lock.withLock { port = value } }
        func get() -> UInt16 { lock.withLock { port } }
    }
}

/// Why the collector could not start.
public enum CollectorError: Error, Sendable, CustomStringConvertible {
    /// The bind address is not an IPv4 address.
    case invalidAddress(String)
    /// libmicrohttpd could not listen (port in use, no permission).
    case cannotListen(address: String, port: UInt16)
    /// libmicrohttpd could not be loaded (the reason names the library and what is wrong).
    case libraryUnavailable(String)
    /// The admin secret is empty (it would protect nothing).
    case emptySecret
    /// Another collector holds the data directory (or its lock file cannot be opened).
    case dataDirectoryInUse(directory: String, reason: String)
    /// The data directory, or something in it, is not this user's alone (DataDirectoryCheck.swift).
    case unsafeDataDirectory(directory: String, reason: String)

    /// The server's reason, as the collector's.
    init(_ failure: HTTPServerError) {
        switch failure {
        case .invalidAddress(let address): self = .invalidAddress(address)
        case .cannotListen(let address, let port): self = .cannotListen(address: address, port: port)
        case .libraryUnavailable(let reason): self = .libraryUnavailable(reason)
        }
    }

    /// A readable reason.
    public var description: String {
        switch self {
        case .invalidAddress(let address): return "invalid IPv4 bind address \(address)"
        case .cannotListen(let address, let port): return "cannot listen on \(address):\(port)"
        case .libraryUnavailable(let reason): return reason
        case .emptySecret: return "the admin secret is empty"
        case .dataDirectoryInUse(let directory, let reason): return "data directory \(directory): \(reason)"
        case .unsafeDataDirectory(let directory, let reason):
            return "data directory \(directory) is not safe to use: \(reason)"
        }
    }
}
