import Foundation

/// Sentry's envelope endpoint (research/sentry.md): each exception record becomes one envelope with its event
/// item (and, for the previous launch's fatal event, that launch's session update); session updates travel up to
/// 100 per envelope. Answers:
/// - 200: done (its `X-Sentry-Rate-Limits` are taken too);
/// - 429: the categories it limits (`X-Sentry-Rate-Limits`, else `Retry-After` or 60 s for all) are held — not
///   sent, not dropped — until their time passes, while envelopes of other categories flow;
/// - 413: the one oversized envelope's record is dropped (logged); 400: the invalid record is dropped, logged with
///   Sentry's reason;
/// - 5xx and network errors: kept and retried with the shared backoff; other statuses as the retry contract says.
///
/// Tracked events, profile operations and aliases have no Sentry equivalent: they are not queued (a debug line
/// says so); CohorlyCrash's breadcrumbs carry the tracked events into later error events, and the distinct id
/// is every event's `user.id`.
final class SentryDestination: Destination, @unchecked Sendable {
    /// The SDK's name in `sentry_client`, the envelope's and the event's `sdk`.
    static let sdkName = "cohorly.swift.linux"
    /// Session updates per envelope (Sentry's limit).
    static let maxSessionsPerEnvelope = 100

    let configuration: SentryConfiguration
    /// The URL, headers and envelope-header tail every envelope shares (made once).
    let endpoint: SentryEndpoint
    let sessions = SentrySessions()
    // Only touched by the delivery thread.
    private var limits = SentryRateLimits()
    private var failures = 0

    init(configuration: SentryConfiguration) {
        self.configuration = configuration
        endpoint = SentryEndpoint(configuration)
    }

    var persistedDescription: String? { configuration.persisted }

    func problem(with event: EventRecord) -> String? {
        guard event.name != ExceptionRecord.eventName else { return nil }
        return "not sent to Sentry, which has no analytics events (tracked events reach it as breadcrumbs of later "
            + "error events when CohorlyCrash is installed)"
    }

    func problem(with operation: ProfileOperation) -> String? {
        let call: String
        switch operation {
        case .identify: call = "identify's profile properties"
        case .alias: call = "alias"
        case .people: call = "people operation"
        }
        return "dropped \(call): Sentry has no profiles (the distinct id is each event's user.id)"
    }

    func willQueue(_ record: inout ExceptionRecord, meta: (String) -> String?) -> [QueueOperation] {
        configuration.sessions ? sessions.willQueue(&record, meta: meta) : []
    }

    /// The whole batch: the destination sends it as several envelopes, holding rate-limited ones back.
    func requestLength(of batch: QueueBatch) -> Int { batch.count }

    /// One envelope's records and items.
    private struct Planned {
        var ids: [Int64]
        var envelope: SentryEnvelope
        var categories: Set<String>
        var label: String
    }

    func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome {
        var removable: [Int64] = []
        var held: [Int64] = []
        var delivered = false
        for planned in plan(batch, removable: &removable, context: context) {
            let now = Monotonic.now()
            if planned.categories.contains(where: { limits.remaining($0, now: now) > 0 }) {
                held += planned.ids
                continue
            }
            let request = planned.envelope.request(endpoint, options: context.options)
            let (response, headers) = exchange(request, context: context)
            limits.update(
                status: response.status, headers: headers, retryAfter: retryAfter(response), now: Monotonic.now())
            let path = endpoint.path
            switch response {
            case .http(let status, _, _) where (200..<300).contains(status):
                context.log("POST \(path): \(planned.label), \(request.body.count) bytes: HTTP \(status)")
                observe(context, planned, request, .delivered, response)
                removable += planned.ids
                delivered = true
                failures = 0
            case .http(429, _, _):
                context.log("POST \(path): \(planned.label): HTTP 429, rate limited: held")
                observe(context, planned, request, .retry(delay: 0, reason: "HTTP 429"), response)
                held += planned.ids
            case .http(413, _, _):
                context.log("POST \(path): dropped \(planned.label): too large for Sentry (413)")
                observe(context, planned, request, .dropped("413"), response)
                removable += planned.ids
            case .http(400, _, let body):
                let reason = Self.reason(body)
                context.log("POST \(path): dropped \(planned.label): Sentry refused it as invalid (400): \(reason)")
                observe(context, planned, request, .dropped("400: \(reason)"), response)
                removable += planned.ids
            default:
                let outcome = RetryContract.outcome(
                    for: response, count: planned.ids.count, bestEffort: false, failures: failures + 1,
                    policy: context.options.retry)
                observe(context, planned, request, outcome, response)
                switch outcome {
                case .retry(let delay, let reason):
                    failures += 1
                    return .keep(removable: removable, delay: delay, reason: "POST \(path): \(reason)")
                case .misconfigured(let status, let delay):
                    failures += 1
                    var said = ""
                    if case .http(_, _, let body) = response { said = ConfigurationWarnings.saying(body) }
                    context.warnOnce(
                        "sentry \(status)",
                        "POST \(path) answered \(status)\(said): "
                            + (status == 401 ? "the DSN's key was refused" : "no Sentry project there")
                            + ": check the DSN. Events stay queued (up to maxQueueSize) and flush() returns false"
                            + " until this is fixed.")
                    return .keep(
                        removable: removable, delay: delay, reason: "POST \(path): HTTP \(status), a configuration problem")
                case .dropped(let reason):
                    context.log("POST \(path): dropped \(planned.label): \(reason)")
                    removable += planned.ids
                case .delivered, .halveBatch:
                    removable += planned.ids
                }
            }
        }
        guard !held.isEmpty else { return .finished(delivered: delivered) }
        let now = Monotonic.now()
        let wait = limits.until.values.map { $0 - now }.filter { $0 > 0 }.min() ?? 1
        return .keep(
            removable: removable, delay: min(max(wait, 0.05), context.options.flushInterval),
            reason: "rate limited by Sentry: \(held.count) record(s) held until the limit passes")
    }

    /// The batch's envelopes, oldest first; records with no Sentry form are logged and finished.
    private func plan(_ batch: QueueBatch, removable: inout [Int64], context: DeliveryContext) -> [Planned] {
        var planned: [Planned] = []
        var index = 0
        let entries = batch.entries
        while index < entries.count {
            let entry = entries[index]
            index += 1
            switch entry.kind {
            case .session:
                var ids = [entry.id]
                var items = [SentryEnvelope.Item(type: "session", payload: entry.json)]
                while index < entries.count, entries[index].kind == .session, ids.count < Self.maxSessionsPerEnvelope {
                    ids.append(entries[index].id)
                    items.append(SentryEnvelope.Item(type: "session", payload: entries[index].json))
                    index += 1
                }
                planned.append(
                    Planned(
                        ids: ids, envelope: SentryEnvelope(eventId: nil, items: items), categories: ["session"],
                        label: "\(ids.count) session update(s)"))
            case .exception:
                guard let record = ExceptionRecord(json: entry.json) else {
                    context.log("dropped an unreadable queued exception")
                    removable.append(entry.id)
                    continue
                }
                let eventId = SentryEvent.eventId(record.insertId)
                var items = [
                    SentryEnvelope.Item(type: "event", payload: SentryEvent.json(record, configuration: configuration))
                ]
                var categories: Set<String> = ["error"]
                if let session = record.properties[SentrySessions.property] {
                    items.append(SentryEnvelope.Item(type: "session", payload: session.jsonString))
                    categories.insert("session")
                }
                planned.append(
                    Planned(
                        ids: [entry.id], envelope: SentryEnvelope(eventId: eventId, items: items),
                        categories: categories, label: "event \(eventId)"))
            case .event, .profile:
                context.log("dropped a queued \(entry.kind.rawValue) record: Sentry has no equivalent")
                removable.append(entry.id)
            }
        }
        return planned
    }

    private func exchange(_ request: TransportRequest, context: DeliveryContext)
        -> (TransportResponse, [String: String])
    {
        if let reading = context.transport as? any HeaderReadingTransport { return reading.exchange(request) }
        return (context.transport.send(request), [:])
    }

    private func retryAfter(_ response: TransportResponse) -> Double? {
        if case .http(_, let retryAfter, _) = response { return retryAfter }
        return nil
    }

    private func observe(
        _ context: DeliveryContext, _ planned: Planned, _ request: TransportRequest, _ outcome: DeliveryOutcome,
        _ response: TransportResponse
    ) {
        context.options.attemptObserver?(
            DeliveryAttempt(
                path: endpoint.path, count: planned.ids.count, bytes: request.body.count,
                outcome: outcome, status: response.status))
    }

    /// Sentry's reason in a refusal's body (`{"detail": …}`), else the body's text (at most 300 bytes).
    static func reason(_ body: [UInt8]) -> String {
        if let detail = CohorlyValue(bytes: body)?["detail"]?.stringValue { return detail }
        let text = String(decoding: body.prefix(300), as: UTF8.self)
        return text.isEmpty ? "no reason given" : text
    }
}

/// A transport that also returns the answer's headers (names lowercased): Sentry's rate limits come in one.
protocol HeaderReadingTransport: Transport {
    func exchange(_ request: TransportRequest) -> (response: TransportResponse, headers: [String: String])
}

extension CurlTransport: HeaderReadingTransport {}
