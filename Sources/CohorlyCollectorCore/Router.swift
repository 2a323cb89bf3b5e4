import CohorlyCollectorAPI
import Foundation

/// Maps requests to the ingestion endpoints, the read API and the admin (fault) API. What any request must pass
/// first (host, origin, content type, credential) is `screen(_:)`, in Router+Policy.swift. The vendors' wires
/// (`IngestionWire`, IngestionWire.swift) are asked first, in the order given.
package struct Router: Sendable {
    package let ingestion: Ingestion
    package let store: CollectorStore
    package let debugFiles: DebugFileStore
    package let faults: FaultInjector
    package let configuration: CollectorConfiguration
    package let rateLimiter: RateLimiter?
    /// The vendors' ingestion wires, asked before the collector's own routes.
    let wires: [any IngestionWire]
    /// Every wire's routes in the order they are tried, read from the wires once (IngestionWire.swift).
    let wireRoutes: [(wire: any IngestionWire, route: WireRoute)]
    /// The web pages' login tokens and sessions (WebSessions.swift).
    var web = WebSessions()
    /// The `Cohorly-HMAC` nonces taken (RequestCredentials.swift).
    var credentials = RequestCredentials()

    init(
        ingestion: Ingestion, store: CollectorStore, debugFiles: DebugFileStore, faults: FaultInjector,
        configuration: CollectorConfiguration, rateLimiter: RateLimiter?, wires: [any IngestionWire],
        web: WebSessions = WebSessions()
    ) {
        self.ingestion = ingestion
        self.store = store
        self.debugFiles = debugFiles
        self.faults = faults
        self.configuration = configuration
        self.rateLimiter = rateLimiter
        self.wires = wires
        wireRoutes = wires.flatMap { wire in wire.routes.map { (wire, $0) } }
        self.web = web
    }

    /// What the server answers a whole request on `port`: its refusal by `screen`, else its route's answer (nil:
    /// the connection is dropped). The server itself screens before the body is read, then routes.
    func answer(_ request: HTTPRequest, port: UInt16) -> HTTPResponse? {
        screen(request, port: port) ?? route(request)
    }

    func route(_ request: HTTPRequest) -> HTTPResponse? {
        do {
            return try dispatch(request)
        } catch let bad as BadRequest {
            return .error(400, bad.message)
        } catch {
            return .error(500, "storage error: \(error)")
        }
    }

    private func dispatch(_ request: HTTPRequest) throws -> HTTPResponse? {
        if Self.isWebPath(request.path) { return webPage(request) }  // Router+Web.swift
        if let answer = try wireAnswer(request) { return answer }  // IngestionWire.swift
        switch request.path {
        case "/track", "/engage":
            if let wait = rateLimiter?.admit(request.clientAddress) {
                let seconds = String(Int(exactly: wait.rounded(.up)) ?? 1)
                return .error(429, "rate limited", headers: [("Retry-After", seconds)])
            }
            return ingest(request.path == "/track" ? .track : .engage, request)
        case "/alias": return ingest(.alias, request)
        case "/health": return .json(200, ["status": 1])
        default: if request.path.hasPrefix("/buildid/") { return debuginfod(request) }
        }
        if let answer = try flags(request) { return answer }  // FlagRoutes.swift
        if let answer = try issueRoute(request) { return answer }  // IssueRoutes.swift
        switch (request.method, request.path) {
        case ("GET", CollectorCredential.challengePath): return authChallenge(request)
        case ("GET", "/api/events"): return try events(request)
        case ("GET", "/api/crashes"):
            return try crashes.list(
                limit: try request.integer("limit", in: QueryLimits.limit, absent: 100),
                after: try request.integer("after", in: QueryLimits.rowId).map(Int64.init),
                flag: request.query["flag"].map(FlagFilter.init), level: request.query["level"])
        case ("GET", _) where request.path.hasPrefix("/api/crashes/"):
            return try crash(String(request.path.dropFirst("/api/crashes/".count)))
        case ("GET", "/api/aliases"): return try records("alias", request)
        case ("GET", "/api/engage"): return try records("engage", request)
        case ("GET", "/api/sessions"): return try records(CollectorStore.sessionRecordKind, request, key: "sessions")
        case ("GET", "/admin/faults"): return .json(200, ["faults": .array(faults.pending.map(\.json))])
        case ("DELETE", "/admin/faults"):
            faults.clear()
            return .json(200, ["status": 1])
        case ("POST", "/admin/faults"): return addFaults(request)
        case ("POST", "/api/debug-files/check"): return checkDebugFiles(request)
        case ("GET", "/api/debug-files"): return listDebugFiles()
        case ("POST", "/api/web/login"): return newLoginURL(request)  // Router+Web.swift
        default: return .error(404, "no such endpoint: \(request.method) \(request.path)")
        }
    }

    /// Applies the next fault (if any) around the real ingestion.
    private func ingest(_ kind: Ingestion.Kind, _ request: HTTPRequest) -> HTTPResponse? {
        withFaults(request) { ingestion.handle(kind, request) }
    }

    /// Applies the next fault (if any) around an ingestion handler (the collector's and the wires').
    package func withFaults(_ request: HTTPRequest, _ handle: () -> HTTPResponse) -> HTTPResponse? {
        guard let fault = faults.next(for: request.path) else { return handle() }
        // A lost acknowledgement stores first, then misbehaves; otherwise the delay comes first.
        let stored = fault.afterInsert ? handle() : nil
        if fault.delay > 0 { faults.delay(fault.delay) }
        if fault.dropConnection { return nil }
        if let status = fault.status {
            var headers: [(String, String)] = []
            if let retryAfter = fault.retryAfter { headers.append(("Retry-After", retryAfter)) }
            if let location = fault.location { headers.append(("Location", location)) }
            return .error(status, "injected fault", headers: headers)
        }
        return stored ?? handle()
    }

    private func addFaults(_ request: HTTPRequest) -> HTTPResponse {
        guard let json = JSONValue(bytes: request.body) else {
            return .error(
                400,
                "expected {\"count\":N,\"status\":503,\"retry_after\":\"2\",\"delay_ms\":0,\"drop_connection\":false}"
            )
        }
        let fault: Fault
        let count: Int
        do {
            fault = try Fault(validating: json)
            count = try Fault.count(json)
        } catch {
            return .error(400, error.message)
        }
        guard faults.add(fault, count: count) else {
            return .error(400, "too many pending faults (at most \(FaultInjector.maximumPending))")
        }
        return .json(200, ["status": 1, "queued": .int(count)])
    }

    var crashes: CrashQueries {
        CrashQueries(store: store, debugFiles: debugFiles, extraDirectories: configuration.extraDebugFileDirectories)
    }

    private func crash(_ insertId: String) throws -> HTTPResponse {
        do {
            guard let crash = try crashes.show(insertId: insertId) else {
                return .error(404, "no crash with insert_id \(insertId)")
            }
            return .json(200, crash)
        } catch let error as CrashQueries.AmbiguousPrefix {
            return .error(409, error.description)
        }
    }
}
