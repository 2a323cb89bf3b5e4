import Foundation

/// The Cohorly HTTP API (the default destination): events to `POST /track` as JSON arrays of
/// `{"event","properties"}` (the queue's event records as they are), profile operations to `/engage`, the first
/// identify's link to `/alias`, the token in `X-Cohorly-Token`, answers under the shared retry contract
/// (`RetryContract`): no retry limit, failures back off.
final class CohorlyDestination: Destination, @unchecked Sendable {
    let apiHost: URL
    let token: String?
    // Only touched by the delivery thread.
    private var failures = 0

    init(apiHost: URL, token: String?) {
        self.apiHost = apiHost
        self.token = token
    }

    var persistedDescription: String? { nil }

    /// The Cohorly API's endpoints.
    enum Route: String {
        /// `POST /track`: events, batched.
        case track
        /// `POST /engage`: profile operations, batched.
        case engage
        /// `POST /alias`: one object per request, sent once (best effort).
        case alias
    }

    func problem(with event: EventRecord) -> String? {
        if event.name.isEmpty { return "empty event name" }
        switch event.distinctId {
        case .string(let id) where !id.isEmpty: return nil
        case .int: return nil
        default: return "distinct_id must be a non-empty string or an integer"
        }
    }

    /// The route of a queued record (nil: unreadable).
    static func route(of entry: QueueEntry) -> (route: Route, operation: ProfileOperation?)? {
        switch entry.kind {
        case .event, .exception: return (.track, nil)
        case .launch: return nil  // another destination's launch record
        case .profile:
            guard let operation = ProfileOperation(json: entry.json) else { return nil }
            if case .people = operation { return (.engage, operation) }
            return (.alias, operation)
        }
    }

    /// Events go to `/track` together, people operations to `/engage`; an alias or identify goes alone.
    func requestLength(of batch: QueueBatch) -> Int {
        guard let first = batch.entries.first.flatMap(Self.route(of:))?.route, first != .alias else { return 1 }
        return batch.entries.prefix { Self.route(of: $0)?.route == first }.count
    }

    func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome {
        guard let (route, operation) = batch.entries.first.flatMap(Self.route(of:)) else {
            context.log("dropped \(batch.count) queued record(s) the Cohorly API has no form for")
            return .finished(delivered: false)
        }
        switch route {
        case .track:
            let bodies = batch.entries.compactMap { entry -> String? in
                guard entry.kind == .exception else { return entry.json }
                return QueuedException(json: entry.json).map { EventRecord(prepared: $0.event).json }
            }
            return send(.track, bodies, context: context)
        case .engage:
            let bodies = batch.entries.compactMap { entry -> String? in
                guard case .people(let name, let value, let id, _)? = ProfileOperation(json: entry.json) else {
                    return nil
                }
                return CohorlyValue.object(["distinct_id": .string(id), name: value]).jsonString
            }
            return send(.engage, bodies, context: context)
        case .alias:
            switch operation {
            case .alias(let alias, let distinctId, _)?:
                return send(.alias, [Self.aliasBody(alias, distinctId)], context: context)
            case .identify(let anonymousId, let distinctId, let set, let setOnce, _)?:
                // The link first (best effort), then the profile properties it set.
                _ = send(.alias, [Self.aliasBody(anonymousId, distinctId)], context: context)
                var bodies: [String] = []
                for (name, value) in [("$set", set), ("$set_once", setOnce)] where !value.isEmpty {
                    bodies.append(
                        CohorlyValue.object(["distinct_id": .string(distinctId), name: .object(value)]).jsonString)
                }
                return bodies.isEmpty ? .finished(delivered: true) : send(.engage, bodies, context: context)
            default: return .finished(delivered: false)
            }
        }
    }

    private static func aliasBody(_ alias: String, _ distinctId: String) -> String {
        CohorlyValue.object(["alias": .string(alias), "distinct_id": .string(distinctId)]).jsonString
    }

    /// One request to `route` with `bodies` (JSON objects; `/alias` takes its single object as is), answered
    /// under the retry contract.
    private func send(_ route: Route, _ bodies: [String], context: DeliveryContext) -> BatchOutcome {
        let request = request(route, bodies, options: context.options)
        let response = context.transport.send(request)
        let outcome = RetryContract.outcome(
            for: response, count: bodies.count, bestEffort: route == .alias, failures: failures + 1,
            policy: context.options.retry, acknowledges: { Self.acknowledges(route, $0) })
        context.options.attemptObserver?(
            DeliveryAttempt(
                path: "/" + route.rawValue, count: bodies.count, bytes: request.body.count, outcome: outcome,
                status: response.status))
        let path = "/" + route.rawValue
        switch outcome {
        case .delivered:
            context.log("POST \(path): \(bodies.count) record(s), \(request.body.count) bytes delivered")
            if case .http(_, _, let body) = response, let refused = Self.refusedOperations(body) {
                context.log("POST \(path): the server refused \(refused) operation(s) and applied the others")
            }
            failures = 0
            return .finished(delivered: true)
        case .dropped(let reason):
            context.log("\(path): dropped \(bodies.count) record(s): \(reason)")
            return .finished(delivered: false)
        case .halveBatch:
            return .halve(size: max(1, bodies.count / 2), removable: [])
        case .retry(let delay, let reason):
            failures += 1
            if case .failure(let message) = response, apiHost.scheme?.lowercased() == "https", message.contains("SSL") {
                // TLS against a server that speaks plain HTTP (a collector on a development machine) fails each time.
                context.warnOnce(
                    "tls",
                    "POST \(request.url.absoluteString) failed: \(message). If the server speaks plain HTTP (`cohorly"
                        + " serve` does), use http:// in the host. Events stay queued and flush() returns false.")
            }
            if case .failure(let message) = response, !message.contains("SSL") {
                context.warnOnce("unreachable", unreachable(request.url, message))
            }
            return .keep(removable: [], delay: delay, reason: "\(path): \(reason)")
        case .unacknowledged(let status, let delay):
            failures += 1
            let body: [UInt8]
            if case .http(_, _, let answer) = response { body = answer } else { body = [] }
            context.warnOnce(
                "unacknowledged",
                "POST \(request.url.absoluteString) answered \(status)\(ConfigurationWarnings.saying(body)) without the"
                    + " Cohorly API's success answer ({\"status\":1,…}): something other than a Cohorly collector answers"
                    + " there; check the host (COHORLY_HOST). Events stay queued (up to maxQueueSize) and flush() returns"
                    + " false until the server answers as the API does.")
            return .keep(
                removable: [], delay: delay, reason: "\(path): HTTP \(status) without the API's success answer")
        case .misconfigured(let status, let delay):
            failures += 1
            let body: [UInt8]
            if case .http(_, _, let answer) = response { body = answer } else { body = [] }
            context.warnOnce("\(status)", misconfiguration(status, url: request.url, body: body))
            return .keep(
                removable: [], delay: delay,
                reason: "\(path): HTTP \(status)\(ConfigurationWarnings.saying(body)), a configuration problem")
        }
    }

    /// Whether `body` is the Cohorly API's success answer to `route`: `{"status":1,"inserted":N}` from `/track`,
    /// `{"status":1,…}` from `/engage` and `/alias`, or `/engage`'s partial refusal (`{"status":0,"refused":[…]}`:
    /// the other operations were applied, and the refused ones would be refused again).
    static func acknowledges(_ route: Route, _ body: [UInt8]) -> Bool {
        guard let answer = CohorlyValue(bytes: body)?.objectValue else { return false }
        switch (route, answer["status"]) {
        case (.track, .int(1)?):
            if case .int = answer["inserted"] { return true }
            return false
        case (.engage, .int(1)?), (.alias, .int(1)?): return true
        case (.engage, .int(0)?): return answer["refused"]?.arrayValue != nil
        default: return false
        }
    }

    /// How many operations an `/engage` answer says were refused (nil: none).
    static func refusedOperations(_ body: [UInt8]) -> Int? {
        guard let refused = CohorlyValue(bytes: body)?["refused"]?.arrayValue, !refused.isEmpty else { return nil }
        return refused.count
    }

    /// What a network failure (nothing answers at `url`) means, naming the URL and how to start or point at a
    /// collector.
    func unreachable(_ url: URL, _ message: String) -> String {
        "POST \(url.absoluteString) failed: \(message). Nothing answers there: start a collector (`cohorly serve`)"
            + " or point the client at one (COHORLY_HOST, or the apiHost given to initialize). Events stay queued (up"
            + " to maxQueueSize) and flush() returns false until it answers."
    }

    /// What a 401 or 404 from the Cohorly API means, naming the URL, what the server said and the likely fix.
    func misconfiguration(_ status: Int, url: URL, body: [UInt8]) -> String {
        var root = "\(apiHost.scheme ?? "https")://\(apiHost.host ?? "")"
        if let port = apiHost.port { root += ":\(port)" }
        let path = apiHost.path
        let hasPath = !path.isEmpty && path != "/"
        let fix: String
        switch status {
        case 404 where hasPath:
            fix = "the host has a path (\(path)), but the Cohorly endpoints are at the host's root: use \(root)"
        case 404: fix = "nothing there takes Cohorly events: check the host (COHORLY_HOST)"
        case _ where hasPath && path.hasPrefix("/api"):
            fix =
                "\(path) is the collector's admin API, which needs its admin secret; events go to the host's root: use \(root)"
        default: fix = "the project token was refused: check the token (COHORLY_TOKEN)"
        }
        return "POST \(url.absoluteString) answered \(status)\(ConfigurationWarnings.saying(body)): \(fix). Events stay"
            + " queued (up to maxQueueSize) and flush() returns false until this is fixed."
    }

    private func request(_ route: Route, _ bodies: [String], options: CohorlyOptions) -> TransportRequest {
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("X-Cohorly-Token", token)) }
        let body = route == .alias && bodies.count == 1 ? Array(bodies[0].utf8) : QueueBatch.joined(bodies)
        return TransportRequest(
            url: apiHost.appendingPathComponent(route.rawValue), headers: headers, body: body,
            timeout: options.retry.requestTimeout, connectTimeout: options.retry.connectTimeout)
    }
}
