import CohorlyClient
import CohorlyCompression
import Foundation

/// Capture V1 delivery of one batch (docs/posthog.md "Answers and retries"):
/// - one `PostHog-Request-Id` and one `created_at` per batch, `PostHog-Attempt` 1, 2, … and a fresh
///   `PostHog-Request-Timestamp` on every attempt;
/// - 2xx with per-event results (`{"results": {uuid: {"result"}}}`, PostHog's success answer): only `retry` events
///   are sent again; `ok`, `warning`, `drop`, `limited`, unknown or missing results are terminal. A 2xx without
///   that answer (something other than PostHog answers at the host) is retried like a 5xx and said once;
/// - 408, 5xx and transport errors resend the events still pending; every other status is terminal (429 too);
///   413 halves the batch while it has more than one event;
/// - the wait before attempt n+1 is `max(min(base·2^(n−1), cap), min(Retry-After, cap))`, at most `maxRetries`
///   times; events still pending after the last attempt stay queued for the next flush.
extension PostHogDestination {
    func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome {
        if legacyWire { return deliverLegacy(batch, context: context) }
        var random = FastRandom()
        let items = batch.entries.map { item(for: $0, random: &random) }
        let refused = items.indices.filter { items[$0].problem != nil }
        for index in refused {
            context.log("dropped event \"\(items[index].name)\": \(items[index].problem ?? "")")
        }
        var pending = items.indices.filter { items[$0].problem == nil }
        guard !pending.isEmpty else { return .finished(delivered: false) }
        let requestId = UUIDv4.make()
        let createdAt = RFC3339.format(milliseconds: Self.nowMilliseconds())
        var removable: [Int64] = refused.map { batch.entries[$0].id }
        return attempting(
            path: Self.path, context: context, removable: { removable },
            kept: { "\(pending.count) event(s) kept for the next flush" }
        ) { attempt in
            let request = self.request(
                for: items, indices: pending, requestId: requestId, createdAt: createdAt, attempt: attempt,
                options: context.options)
            switch context.transport.send(request) {
            case .http(let status, let after, let body) where (200..<300).contains(status):
                guard let answer = Self.resultsMap(body) else {
                    return unacknowledged(status, body: body, path: Self.path, retryAfter: after, context: context)
                }
                let (retry, finished) = results(answer, items: items, indices: pending, context: context)
                removable += finished.map { batch.entries[$0].id }
                context.log(
                    "POST /\(Self.path): \(pending.count) event(s), attempt \(attempt): HTTP \(status)"
                        + (retry.isEmpty ? "" : ", \(retry.count) to retry"))
                guard !retry.isEmpty else { return .done(.finished(delivered: true)) }
                pending = retry
                return .retry(reason: "\(retry.count) event(s) answered retry", retryAfter: after)
            case .http(let status, let after, let body) where status == 408 || (500..<600).contains(status):
                let reason = "HTTP \(status)\(Self.errorTag(body))"
                context.log("POST /\(Self.path): attempt \(attempt): \(reason)")
                return .retry(reason: reason, retryAfter: after)
            case .http(413, _, _) where pending.count > 1:
                return .done(.halve(size: max(1, pending.count / 2), removable: removable))
            case .http(404, _, _) where attempt == 1:
                // A self-hosted PostHog without capture V1: this batch and the rest of the launch go to /batch.
                context.log(
                    "POST /\(Self.path): HTTP 404: no capture V1 here; using /\(Self.legacyPath) for this launch")
                legacyWire = true
                return .done(deliverLegacy(batch, context: context))
            case .http(401, _, let body):
                return .done(
                    misconfigured(
                        401, path: Self.path, body: body, kept: pending.count, removable: removable, context: context))
            case .http(let status, _, let body):
                drop(items, pending, because: "HTTP \(status)\(Self.errorTag(body)), not retried", context: context)
                return .done(.finished(delivered: false))
            case .failure(let message):
                context.log("POST /\(Self.path): attempt \(attempt): \(message)")
                return .retry(reason: message, retryAfter: nil)
            }
        }
    }

    static func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// A 401 (the key refused) or a 404 from the legacy endpoint: the events stay queued, the problem is said once.
    func misconfigured(
        _ status: Int, path: String, body: [UInt8], kept: Int, removable: [Int64], context: DeliveryContext
    ) -> BatchOutcome {
        let url = configuration.host.appendingPathComponent(path).absoluteString
        let fix =
            status == 401
            ? "the project API key was refused: check the key (phc_…) and the host's region"
            : "nothing there takes PostHog events: check the host"
        context.warnOnce(
            "posthog \(status)",
            "POST \(url) answered \(status)\(ConfigurationWarnings.saying(body)): \(fix). Events stay queued (up to"
                + " maxQueueSize) and flush() returns false until this is fixed.")
        return .keep(
            removable: removable, delay: configuration.maxRetryDelay,
            reason: "/\(path): HTTP \(status), a configuration problem; \(kept) event(s) kept")
    }

    /// The request for the items at `indices`.
    func request(
        for items: [Item], indices: [Int], requestId: String, createdAt: String, attempt: Int,
        options: CohorlyOptions
    ) -> TransportRequest {
        let migration = configuration.historicalMigration ? ",\"historical_migration\":true" : ""
        let body = QueueBatch.joined(
            indices.map { items[$0].json },
            prefix: "{\"created_at\":\"\(createdAt)\"\(migration),\"batch\":[", suffix: "]}")
        let headers = [
            ("Authorization", "Bearer \(configuration.apiKey)"), ("Content-Type", "application/json"),
            ("User-Agent", sdkInfo), ("PostHog-Sdk-Info", sdkInfo), ("PostHog-Attempt", String(attempt)),
            ("PostHog-Request-Id", requestId),
            ("PostHog-Request-Timestamp", RFC3339.format(milliseconds: Self.nowMilliseconds())),
        ]
        return request(Self.path, headers: headers, body: body, options: options)
    }

    /// A POST of `body` to `path` under the configured host, gzipped (with its `Content-Encoding`) when the
    /// configuration asks: what both wires, capture V1 and the legacy `/batch`, send.
    func request(_ path: String, headers: [(String, String)], body: [UInt8], options: CohorlyOptions)
        -> TransportRequest
    {
        var body = body
        var headers = headers
        if configuration.compression, let compressed = Gzip.compress(body) {
            body = compressed
            headers.append(("Content-Encoding", "gzip"))
        }
        return TransportRequest(
            url: configuration.host.appendingPathComponent(path), headers: headers, body: body,
            timeout: options.retry.requestTimeout, connectTimeout: options.retry.connectTimeout)
    }

    /// The per-event results of a capture V1 success answer (nil: the body is not one).
    static func resultsMap(_ body: [UInt8]) -> [String: CohorlyValue]? {
        CohorlyValue(bytes: body)?["results"]?.objectValue
    }

    /// A 2xx on `path` whose body is not PostHog's success answer: not a delivery, retried as a 5xx would be, and
    /// said once.
    func unacknowledged(
        _ status: Int, body: [UInt8], path: String, retryAfter: Double?, context: DeliveryContext
    ) -> AttemptStep {
        let url = configuration.host.appendingPathComponent(path).absoluteString
        let expected = path == Self.legacyPath ? "{\"status\": 1}" : "{\"results\": …}"
        context.warnOnce(
            "posthog unacknowledged",
            "POST \(url) answered \(status)\(ConfigurationWarnings.saying(body)) without PostHog's success answer"
                + " (\(expected)): something other than PostHog answers there; check the host. Events stay queued (up"
                + " to maxQueueSize) and flush() returns false until the server answers as PostHog does.")
        return .retry(reason: "HTTP \(status) without PostHog's success answer", retryAfter: retryAfter)
    }

    /// Reads a success answer's per-event `results`: the indices to send again (`retry`) and the finished ones.
    /// Drops and limits are logged with their details.
    private func results(_ results: [String: CohorlyValue], items: [Item], indices: [Int], context: DeliveryContext)
        -> (retry: [Int], finished: [Int])
    {
        var retry: [Int] = []
        var finished: [Int] = []
        var refused: [String: [Int]] = [:]
        for index in indices {
            let result = results[items[index].uuid]
            switch result?["result"]?.stringValue {
            case "retry": retry.append(index)
            case let outcome? where outcome == "drop" || outcome == "limited":
                let details = result?["details"]?.stringValue.map { " (\($0))" } ?? ""
                refused[outcome + details, default: []].append(index)
                finished.append(index)
            default: finished.append(index)  // ok, warning, unknown or absent: done
            }
        }
        for (reason, dropped) in refused.sorted(by: { $0.key < $1.key }) {
            drop(items, dropped, because: "answered \(reason)", context: context)
        }
        return (retry, finished)
    }

    /// Logs the items at `indices` as dropped, by name and uuid.
    func drop(_ items: [Item], _ indices: [Int], because reason: String, context: DeliveryContext) {
        guard context.options.debug else { return }
        let names = indices.prefix(20).map { "\"\(items[$0].name)\" \(items[$0].uuid)" }
        let more = indices.count > 20 ? ", and \(indices.count - 20) more" : ""
        context.log("dropped \(indices.count) event(s) (\(reason)): \(names.joined(separator: ", "))\(more)")
    }

    /// `: <error tag>` from a non-2xx body, when it has one.
    static func errorTag(_ body: [UInt8]) -> String {
        CohorlyValue(bytes: body)?["error"]?.stringValue.map { " \($0)" } ?? ""
    }
}
