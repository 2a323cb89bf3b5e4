import CohorlyCollectorCore
import Foundation

/// Sentry's envelope endpoint, `POST /api/{project_id}/envelope/` (docs/sentry.md "Local collector"), so the Sentry
/// destination and any other Sentry SDK run end to end on one machine. `Router.screen` has already checked Host
/// and Origin and that the body is `application/x-sentry-envelope` (its route: SentryWires.swift).
///
/// - Body: gzip or deflate inflated (the collector's body limit, then max(10 MiB, it) inflated: 413 beyond).
/// - Auth: the public key from `X-Sentry-Auth`, `?sentry_key=` or the envelope's `dsn` (``SentryAuth``),
///   checked like a project token; none → 403, an unknown one → 403.
/// - Framing parsed strictly (``SentryEnvelope``): 400 `{"detail": reason}`. Two event items, or an event id
///   that is not a UUID → 400; an event item over 1 MiB or more than 100 sessions → 413, as Relay answers.
/// - `event` items: stored as events (``SentryEventRecord``), deduplicated by event id (the header's, else the
///   payload's; Relay makes one up when both lack it, so does this). An event payload that is not a JSON object
///   is refused with 400 (Relay would drop it after answering 200; refusing shows the sender its mistake).
/// - `session` items: checked like Relay checks them (``SentrySession``) and stored; an invalid one is dropped
///   and logged (Relay drops it too, answering 200). Other item types are skipped.
/// - Stored with one commit per group of envelopes that arrive together (`CollectorStore.insert(together:)`):
///   an envelope's event and sessions are committed (in one transaction) before it is answered.
/// - Answer: 200 `{"id": "<event id, 32 hex>"}` (`{}` without an event). Injected faults (``Fault``) apply,
///   with Sentry's error body; a fault's `rateLimits` is sent as `X-Sentry-Rate-Limits`, also on a 200.
///   The collector's rate limit answers 429 with `Retry-After` and `X-Sentry-Rate-Limits: <s>::organization`.
struct SentryIngestion: Sendable {
    let store: CollectorStore
    let configuration: CollectorConfiguration
    let faults: FaultInjector
    let rateLimiter: RateLimiter?
    /// Inflated bodies and parsed items at once (ParseBudget.swift).
    var budget = ParseBudget(capacity: CollectorConfiguration().parseBudgetBytes)

    /// Relay's limits: 1 MiB per event item, 100 sessions per envelope.
    static let maxEventBytes = 1 << 20
    static let maxSessions = 100
    /// The media type the route takes.
    static let contentType = "application/x-sentry-envelope"

    /// The project id of an envelope route (`/api/<digits>/envelope/`, the trailing slash optional), else nil.
    static func projectId(_ path: String) -> String? {
        SentryEnvelopeWire.route.path.match(path)?["project_id"].map(String.init)
    }

    /// Sentry's error answer: `{"detail": reason}`.
    static func error(_ status: Int, _ detail: String, headers: [(String, String)] = []) -> HTTPResponse {
        var response = HTTPResponse.json(status, ["detail": .string(detail)], headers: headers)
        response.reason = detail
        return response
    }

    /// The answer to one envelope request (nil: the connection is dropped by an injected fault).
    func handle(_ request: HTTPRequest, projectId: String) -> HTTPResponse? {
        guard request.method == "POST" else { return Self.error(405, "use POST") }
        if let wait = rateLimiter?.admit(request.clientAddress) {
            let seconds = String(Int(exactly: wait.rounded(.up)) ?? 1)
            return Self.error(
                429, "rate limited",
                headers: [("Retry-After", seconds), ("X-Sentry-Rate-Limits", "\(seconds)::organization")])
        }
        guard let fault = faults.next(for: request.path) else { return accept(request, projectId: projectId) }
        let stored = fault.afterInsert ? accept(request, projectId: projectId) : nil
        if fault.delay > 0 { faults.delay(fault.delay) }
        if fault.dropConnection { return nil }
        var headers: [(String, String)] = []
        if let retryAfter = fault.retryAfter { headers.append(("Retry-After", retryAfter)) }
        if let limits = fault.rateLimits { headers.append(("X-Sentry-Rate-Limits", limits)) }
        if let status = fault.status { return Self.error(status, "injected fault", headers: headers) }
        var answer = stored ?? accept(request, projectId: projectId)
        answer.headers += headers
        return answer
    }

    /// Reads, checks and stores the envelope.
    private func accept(_ request: HTTPRequest, projectId: String) -> HTTPResponse {
        if request.bodyTooLarge || request.body.count > configuration.maxBodyBytes {
            return Self.error(413, "envelope exceeded size limits (body over \(configuration.maxBodyBytes) bytes)")
        }
        let body: [UInt8]
        let held: Int
        switch budget.inflate(request, limit: configuration.maxInflatedBytes) {
        case .success(let decoded): (body, held) = decoded
        case .failure(.decode(.tooLarge(let limit))):
            return Self.error(413, "envelope exceeded size limits (inflated over \(limit) bytes)")
        case .failure(.decode(.corrupt(let reason))): return Self.error(400, "invalid body encoding: \(reason)")
        case .failure(.decode(.unsupported(let encoding))):
            return Self.error(415, "unsupported content encoding \(encoding)")
        case .failure(.busy): return Self.error(503, ParseBudget.busyReason, headers: [("Retry-After", "1")])
        }
        // Items are parsed one at a time: the budget holds the inflated body and the largest item's tree.
        var holding = held
        defer { budget.release(holding) }
        func room(for payload: ArraySlice<UInt8>) -> HTTPResponse? {
            guard let shape = payload.withUnsafeBufferPointer({ JSONShape.measure($0) }) else { return nil }
            let wanted = held + ParseBudget.cost(of: shape, bytes: payload.count)
            guard wanted > holding else { return nil }
            guard wanted <= budget.capacity else { return Self.error(413, budget.tooLargeReason(values: shape.values)) }
            guard budget.resize(from: holding, to: wanted) else {
                return Self.error(503, ParseBudget.busyReason, headers: [("Retry-After", "1")])
            }
            holding = wanted
            return nil
        }
        let envelope: SentryEnvelope
        do {
            envelope = try SentryEnvelope(parsing: body[...])
        } catch {
            guard SentryAuth.key(request, envelopeHeader: nil) != nil else {
                return Self.error(403, "missing authorization information")
            }
            return Self.error(400, "invalid envelope: \(error.description)")
        }
        guard let key = SentryAuth.key(request, envelopeHeader: envelope.header) else {
            return Self.error(403, "missing authorization information")
        }
        guard configuration.accepts(token: key) else { return Self.error(403, "unknown sentry_key") }
        let events = envelope.items.filter { $0.type == "event" }
        let sessions = envelope.items.filter { $0.type == "session" }
        guard events.count <= 1 else { return Self.error(400, "invalid envelope: duplicate item: event") }
        if let event = events.first, event.payload.count > Self.maxEventBytes {
            return Self.error(413, "envelope exceeded size limits (event over \(Self.maxEventBytes) bytes)")
        }
        guard sessions.count <= Self.maxSessions else {
            return Self.error(413, "envelope exceeded size limits (more than \(Self.maxSessions) sessions)")
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var eventId = envelope.header["event_id"]?.stringValue.flatMap(SentryEnvelope.eventId)
        var newEvents: [CollectorStore.NewEvent] = []
        if let item = events.first {
            if let refusal = room(for: item.payload) { return refusal }
            guard let event = JSONValue(bytes: Array(item.payload))?.objectValue else {
                return Self.error(400, "invalid event: the payload is not a JSON object")
            }
            guard JSONValue.object(event).nestingDepth() <= NestingLimit.stored else {
                return Self.error(400, "invalid event: nests deeper than \(NestingLimit.stored) levels")
            }
            if eventId == nil, let own = event["event_id"], own != .null {
                guard let id = own.stringValue.flatMap(SentryEnvelope.eventId) else {
                    return Self.error(400, "invalid event: event_id is not a UUID")
                }
                eventId = id
            }
            let id = eventId ?? UUID().uuidString.lowercased()
            eventId = id
            newEvents.append(
                SentryEventRecord.newEvent(event, eventId: id, token: key, projectId: projectId, now: now))
        }
        var records: [(token: String, json: String)] = []
        for item in sessions {
            if let refusal = room(for: item.payload) { return refusal }
            switch SentrySession.checked(item.payload) {
            case .success(let session) where session.nestingDepth() > NestingLimit.stored:
                log("dropped a session item nesting deeper than \(NestingLimit.stored) levels")
            case .success(let session): records.append((key, session.jsonString))
            case .failure(let problem): log("dropped an invalid session item: \(problem.description)")
            }
        }
        do {
            if !newEvents.isEmpty || !records.isEmpty {
                _ = try store.insert(
                    together: CollectorStore.Rows(
                        events: newEvents, records: records, recordKind: CollectorStore.sessionRecordKind,
                        receivedAt: now))
            }
        } catch  where CollectorStore.isFull(error) {
            return Self.error(507, "storage full: \(error)")
        } catch {
            return Self.error(500, "storage error: \(error)")
        }
        let answer: JSONValue = eventId.map { ["id": .string(String($0.filter { $0 != "-" }))] } ?? [:]
        return .json(200, answer)
    }

    private func log(_ line: String) {
        guard configuration.requestLog != .none else { return }
        if let handler = configuration.logHandler {
            handler("sentry envelope: \(line)")
        } else {
            FileHandle.standardError.write(Data("cohorly serve: sentry envelope: \(line)\n".utf8))
        }
    }
}
