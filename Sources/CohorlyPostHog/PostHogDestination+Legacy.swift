import CohorlyClient
import CohorlyCompression
import Foundation

/// The legacy capture wire, `POST {host}/batch` (docs/posthog.md "Self-hosted PostHog without capture V1"): for a
/// self-hosted PostHog without
/// capture V1, which answers `/i/v1/analytics/events` with 404 — then this batch is sent again here and so is
/// the rest of the launch (the next launch tries V1 again) — or from the start when
/// ``PostHogConfiguration/captureEndpoint`` says so.
/// - body `{"api_key", "batch": [{event, distinct_id, properties, timestamp, uuid}, …], "sent_at"}`: the key in
///   the body, each event's V1 `options` folded back into the legacy properties (`$process_person_profile`,
///   `$cookieless_mode`, `$ignore_sent_at`, `$product_tour_id`), `$lib` / `$lib_version` properties again;
/// - the answer is for the whole batch: `2xx {"status": 1}` delivers it (a 2xx without that answer is retried and
///   said once); 408, 429, 5xx and transport errors are retried as V1 retries (same uuids and timestamps), waiting
///   at least `Retry-After` (PostHog's legacy compliance suite checks it on a 429); 413 halves a batch of more than
///   one event; 401 (the key refused) and 404 are configuration problems (kept, said once); every other status
///   drops the batch.
extension PostHogDestination {
    /// The legacy capture path.
    static let legacyPath = "batch"

    func deliverLegacy(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome {
        var random = FastRandom()
        let items = batch.entries.map { item(for: $0, random: &random) }
        var removable: [Int64] = []
        var events: [String] = []
        for (index, item) in items.enumerated() {
            if let problem = item.problem ?? (Self.legacyEvent(item.json) == nil ? "unreadable item" : nil) {
                context.log("dropped event \"\(item.name)\": \(problem)")
                removable.append(batch.entries[index].id)
            } else if let event = Self.legacyEvent(item.json) {
                events.append(event)
            }
        }
        guard !events.isEmpty else { return .finished(delivered: false) }
        return attempting(
            path: Self.legacyPath, context: context, removable: { removable }, kept: { "\(events.count) event(s) kept" }
        ) {
            attempt in
            switch context.transport.send(legacyRequest(events, options: context.options)) {
            case .http(let status, let after, let body) where (200..<300).contains(status):
                guard CohorlyValue(bytes: body)?["status"] == .int(1) else {
                    return unacknowledged(
                        status, body: body, path: Self.legacyPath, retryAfter: after, context: context)
                }
                context.log("POST /\(Self.legacyPath): \(events.count) event(s), attempt \(attempt): HTTP \(status)")
                return .done(.finished(delivered: true))
            case .http(let status, let after, let body)
            where status == 408 || status == 429 || (500..<600).contains(status):
                let reason = "HTTP \(status)\(Self.errorTag(body))"
                context.log("POST /\(Self.legacyPath): attempt \(attempt): \(reason)")
                return .retry(reason: reason, retryAfter: after)
            case .http(413, _, _) where events.count > 1:
                return .done(.halve(size: max(1, events.count / 2), removable: removable))
            case .http(let status, _, let body) where status == 401 || status == 404:
                return .done(
                    misconfigured(
                        status, path: Self.legacyPath, body: body, kept: events.count, removable: removable,
                        context: context))
            case .http(let status, _, let body):
                context.log(
                    "/\(Self.legacyPath): dropped \(events.count) event(s): HTTP \(status)\(Self.errorTag(body)), not retried"
                )
                return .done(.finished(delivered: false))
            case .failure(let message):
                context.log("POST /\(Self.legacyPath): attempt \(attempt): \(message)")
                return .retry(reason: message, retryAfter: nil)
            }
        }
    }

    /// A V1 batch item as a legacy event (nil when the item is not readable JSON).
    static func legacyEvent(_ itemJSON: String) -> String? {
        guard let item = CohorlyValue(json: itemJSON)?.objectValue else { return nil }
        var properties = item["properties"]?.objectValue ?? [:]
        let options = item["options"]?.objectValue ?? [:]
        for (property, option) in optionProperties where properties[property] == nil {
            if let value = options[option] { properties[property] = value }
        }
        for key in ["session_id", "window_id"] where properties["$" + key] == nil {
            if let value = item[key] { properties["$" + key] = value }
        }
        if properties["$lib"] == nil { properties["$lib"] = .string(AutomaticProperties.libraryName) }
        if properties["$lib_version"] == nil {
            properties["$lib_version"] = .string(AutomaticProperties.libraryVersion)
        }
        var event: Properties = ["properties": .object(properties)]
        for key in ["event", "distinct_id", "timestamp", "uuid"] { event[key] = item[key] }
        return CohorlyValue.object(event).jsonString
    }

    /// One legacy request for `events` (JSON objects): the key in the body, a fresh `sent_at`.
    func legacyRequest(_ events: [String], options: CohorlyOptions) -> TransportRequest {
        var prefix = "{\"api_key\":"
        CohorlyValue.writeString(configuration.apiKey, into: &prefix)
        prefix += ",\"batch\":["
        let sentAt = RFC3339.format(milliseconds: Self.nowMilliseconds())
        let body = QueueBatch.joined(events, prefix: prefix, suffix: "],\"sent_at\":\"\(sentAt)\"}")
        return request(
            Self.legacyPath, headers: [("Content-Type", "application/json"), ("User-Agent", sdkInfo)], body: body,
            options: options)
    }
}
