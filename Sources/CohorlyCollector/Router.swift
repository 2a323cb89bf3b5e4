import Foundation

/// Maps requests to the ingestion endpoints, the read API and the admin (fault) API.
struct Router: Sendable {
    let ingestion: Ingestion
    let store: CollectorStore
    let debugFiles: DebugFileStore
    let faults: FaultInjector
    let configuration: CollectorConfiguration
    let rateLimiter: RateLimiter?

    func route(_ request: HTTPRequest) -> HTTPResponse? {
        switch request.path {
        case "/track", "/engage":
            if let wait = rateLimiter?.admit(request.clientAddress) {
                let seconds = String(Int(wait.rounded(.up)))
                return .error(429, "rate limited", headers: [("Retry-After", seconds)])
            }
            return ingest(request.path == "/track" ? .track : .engage, request)
        case "/alias": return ingest(.alias, request)
        case "/health": return .json(200, ["status": 1])
        default: if request.path.hasPrefix("/buildid/") { return debuginfod(request) }
        }
        if request.path.hasPrefix("/api/") || request.path.hasPrefix("/admin/") {
            if let admin = configuration.adminToken, request.header("Authorization") != "Bearer \(admin)" {
                return .error(401, "missing or wrong admin credential")
            }
        }
        switch (request.method, request.path) {
        case ("GET", "/api/events"): return events(request)
        case ("GET", "/api/crashes"): return crashList(request)
        case ("GET", _) where request.path.hasPrefix("/api/crashes/"):
            return crash(String(request.path.dropFirst("/api/crashes/".count)))
        case ("GET", "/api/aliases"): return records("alias")
        case ("GET", "/api/engage"): return records("engage")
        case ("GET", "/admin/faults"): return .json(200, ["faults": .array(faults.pending.map(\.json))])
        case ("DELETE", "/admin/faults"):
            faults.clear()
            return .json(200, ["status": 1])
        case ("POST", "/admin/faults"): return addFaults(request)
        case ("POST", "/api/debug-files/check"): return checkDebugFiles(request)
        case ("GET", "/api/debug-files"): return listDebugFiles()
        default: return .error(404, "no such endpoint: \(request.method) \(request.path)")
        }
    }

    /// Applies the next fault (if any) around the real ingestion.
    private func ingest(_ kind: Ingestion.Kind, _ request: HTTPRequest) -> HTTPResponse? {
        guard let fault = faults.next(for: request.path) else { return ingestion.handle(kind, request) }
        // A lost acknowledgement stores first, then misbehaves; otherwise the delay comes first.
        let stored = fault.afterInsert ? ingestion.handle(kind, request) : nil
        if fault.delay > 0 { faults.delay(fault.delay) }
        if fault.dropConnection { return nil }
        if let status = fault.status {
            var headers: [(String, String)] = []
            if let retryAfter = fault.retryAfter { headers.append(("Retry-After", retryAfter)) }
            if let location = fault.location { headers.append(("Location", location)) }
            return .error(status, "injected fault", headers: headers)
        }
        return stored ?? ingestion.handle(kind, request)
    }

    private func addFaults(_ request: HTTPRequest) -> HTTPResponse {
        guard let json = JSONValue(bytes: request.body), let fault = Fault(json: json) else {
            return .error(
                400,
                "expected {\"count\":N,\"status\":503,\"retry_after\":\"2\",\"delay_ms\":0,\"drop_connection\":false}"
            )
        }
        let count = json["count"]?.intValue ?? 1
        faults.add(fault, count: count)
        return .json(200, ["status": 1, "queued": .int(count)])
    }

    private func events(_ request: HTTPRequest) -> HTTPResponse {
        let query = EventQuery(
            event: request.query["event"], distinctId: request.query["distinct_id"],
            insertId: request.query["insert_id"],
            afterId: request.query["after"].flatMap { Int64($0) },
            limit: request.query["limit"].flatMap { Int($0) } ?? 1000)
        do {
            let events = try store.events(matching: query)
            let list: [JSONValue] = events.map { event in
                [
                    "id": .int(Int(event.id)), "event": .string(event.event),
                    "distinct_id": .string(event.distinctId),
                    "time": .int(Int(event.time)), "insert_id": event.insertId.map(JSONValue.string) ?? .null,
                    "received_at": .int(Int(event.receivedAt)),
                    "properties": JSONValue(json: event.propertiesJSON) ?? .object([:]),
                ]
            }
            return .json(
                200,
                ["events": .array(list), "count": .int(list.count), "total": .int(try store.eventCount())])
        } catch {
            return .error(500, "storage error: \(error)")
        }
    }

    private var crashes: CrashQueries {
        CrashQueries(store: store, debugFiles: debugFiles, extraDirectories: configuration.extraDebugFileDirectories)
    }

    private func crashList(_ request: HTTPRequest) -> HTTPResponse {
        do {
            return .json(200, try crashes.list(limit: request.query["limit"].flatMap { Int($0) } ?? 100))
        } catch {
            return .error(500, "storage error: \(error)")
        }
    }

    private func crash(_ insertId: String) -> HTTPResponse {
        do {
            guard let crash = try crashes.show(insertId: insertId) else {
                return .error(404, "no crash with insert_id \(insertId)")
            }
            return .json(200, crash)
        } catch {
            return .error(500, "storage error: \(error)")
        }
    }

    private func records(_ kind: String) -> HTTPResponse {
        do {
            let list = try store.records(kind: kind).map { JSONValue(json: $0.json) ?? .null }
            return .json(200, ["records": .array(list), "count": .int(list.count)])
        } catch {
            return .error(500, "storage error: \(error)")
        }
    }
}
