import CohorlyClient
import Foundation

/// Sentry's envelope endpoint (docs/sentry.md): each exception record becomes one envelope with its event
/// item (and, for the previous launch's fatal event, that launch's session update); session updates travel up to
/// 100 per envelope. Answers:
/// - 2xx with Sentry's success answer (``acknowledges(_:eventId:)``): done (its `X-Sentry-Rate-Limits` are taken
///   too);
/// - 429: the categories it limits (`X-Sentry-Rate-Limits`, else `Retry-After` or 60 s for all) are held — not
///   sent, not dropped — until their time passes, while envelopes of other categories flow;
/// - 413: the one oversized envelope's record is dropped (logged); 400: the invalid record is dropped, logged with
///   Sentry's reason; 401, 403 and 404 (a DSN whose key, project or path the server does not know) keep the records
///   and are said once (``misconfiguration(_:body:)``); a 2xx without Sentry's success answer too;
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
    /// Envelopes in flight at once (one event each): a batch is not held up by one round trip per event.
    static let maxEnvelopesInFlight = 6

    let configuration: SentryConfiguration
    /// The URL, headers and envelope-header tail every envelope shares (made once).
    let endpoint: SentryEndpoint
    let sessions = SentrySessions()
    // Only touched by the delivery thread.
    private var limits = SentryRateLimits()
    private let clockLock = NSLock()
    private var clock: @Sendable () -> Double = { Monotonic.now() }
    private var failures = 0

    init(configuration: SentryConfiguration) {
        self.configuration = configuration
        endpoint = SentryEndpoint(configuration)
    }

    var persistedDescription: String? { configuration.persisted }

    /// The monotonic clock rate limits are timed on (seconds); tests move it on instead of waiting.
    func setClock(_ clock: @escaping @Sendable () -> Double) { clockLock.withLock { self.clock = clock } }

    private func clockNow() -> Double { clockLock.withLock { clock }() }

    func problem(with event: EventRecord) -> String? {
        guard event.name != QueuedException.eventName else { return nil }
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

    func willQueue(_ record: inout QueuedException, meta: (String) -> String?) -> [QueueOperation] {
        configuration.sessions ? sessions.willQueue(&record, meta: meta) : []
    }

    /// The whole batch: the destination sends it as several envelopes, holding rate-limited ones back.
    func requestLength(of batch: QueueBatch) -> Int { batch.count }

    /// One envelope's records and items.
    private struct Planned {
        var ids: [Int64]
        /// Makes the envelope's request (on the helper thread that sends it).
        var request: @Sendable () -> TransportRequest
        var categories: Set<String>
        var label: String
        /// The envelope's event id (nil: it carries session updates only): Sentry's answer must name it.
        var eventId: String? = nil
        /// It carries session updates: it is sent alone, after every envelope before it is answered, so a
        /// session's updates arrive in order.
        var alone: Bool { categories.contains("session") }
    }

    /// What the answers so far make of the batch.
    private struct Progress {
        var removable: [Int64] = []
        var held: [Int64] = []
        var delivered = false
        /// Set by the first answer that stops the batch (retry later): its delay and reason.
        var stop: (delay: Double, reason: String)?
    }

    func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome {
        var progress = Progress()
        var envelopes = Envelopes(
            entries: batch.entries, endpoint: endpoint, configuration: configuration, options: context.options)
        let transport = context.transport
        let exchanges = SentryExchanges(width: Self.maxEnvelopesInFlight) { Self.exchange($0, transport) }
        defer { exchanges.close() }
        // The envelopes started (`sent` indexes them), the next one once made, and those in flight, oldest first.
        // One at a time until an envelope is accepted, then up to `maxEnvelopesInFlight`; back to one after any
        // other answer.
        var planned: [Planned] = []
        var upcoming: Planned?
        var sent: [Int] = []
        var window = 1
        // Stopping (or a reset, or an opt-out): the envelopes in flight are answered and judged, no other starts.
        var stopped = false
        while true {
            stopped = stopped || !context.wait(0)
            while !stopped, progress.stop == nil, sent.count < window, !sent.contains(where: { planned[$0].alone }) {
                if upcoming == nil { upcoming = envelopes.next(removable: &progress.removable, context: context) }
                guard let candidate = upcoming, !(candidate.alone && !sent.isEmpty) else { break }
                upcoming = nil
                let now = clockNow()
                if candidate.categories.contains(where: { limits.remaining($0, now: now) > 0 }) {
                    progress.held += candidate.ids
                    continue
                }
                planned.append(candidate)
                exchanges.start(planned.count - 1, candidate.request)
                sent.append(planned.count - 1)
            }
            guard !sent.isEmpty else { break }
            let index = sent.removeFirst()
            guard let (request, answer) = exchanges.answer(index) else { continue }
            let accepted = take(answer, planned[index], request, &progress, context: context)
            window = accepted ? Self.maxEnvelopesInFlight : 1
        }
        if let stop = progress.stop {
            return .keep(removable: progress.removable, delay: stop.delay, reason: stop.reason)
        }
        if stopped, upcoming != nil || !envelopes.isEmpty { return .cancelled(removable: progress.removable) }
        guard !progress.held.isEmpty else { return .finished(delivered: progress.delivered) }
        let now = clockNow()
        let wait = limits.until.values.map { $0 - now }.filter { $0 > 0 }.min() ?? 1
        return .keep(
            removable: progress.removable, delay: min(max(wait, 0.05), context.options.flushInterval),
            reason: "rate limited by Sentry: \(progress.held.count) record(s) held until the limit passes")
    }

    /// Takes one envelope's answer into `progress`; true when Sentry accepted it.
    private func take(
        _ answer: SentryExchanges.Answer, _ planned: Planned, _ request: TransportRequest, _ progress: inout Progress,
        context: DeliveryContext
    ) -> Bool {
        let (response, headers) = answer
        limits.update(status: response.status, headers: headers, retryAfter: retryAfter(response), now: clockNow())
        let path = endpoint.path
        switch response {
        case .http(let status, _, let body)
        where (200..<300).contains(status) && Self.acknowledges(body, eventId: planned.eventId):
            context.log("POST \(path): \(planned.label), \(request.body.count) bytes: HTTP \(status)")
            observe(context, planned, request, .delivered, response)
            progress.removable += planned.ids
            progress.delivered = true
            failures = 0
            return true
        case .http(429, _, _):
            context.log("POST \(path): \(planned.label): HTTP 429, rate limited: held")
            observe(context, planned, request, .retry(delay: 0, reason: "HTTP 429"), response)
            progress.held += planned.ids
        case .http(413, _, _):
            context.log("POST \(path): dropped \(planned.label): too large for Sentry (413)")
            observe(context, planned, request, .dropped("413"), response)
            progress.removable += planned.ids
        case .http(400, _, let body):
            let reason = Self.reason(body)
            context.log("POST \(path): dropped \(planned.label): Sentry refused it as invalid (400): \(reason)")
            observe(context, planned, request, .dropped("400: \(reason)"), response)
            progress.removable += planned.ids
        default:
            // The first such answer counts a failure and stops the batch; envelopes still in flight then only
            // add what they finish. A 403 (a key or project the server does not know: Bugsink, Relay, `cohorly
            // serve`) is, like 401 and 404, not a verdict on the event but on the DSN.
            let first = progress.stop == nil
            let outcome =
                response.status == 403
                ? .misconfigured(status: 403, delay: context.options.retry.maxDelay)
                : RetryContract.outcome(
                    for: response, count: planned.ids.count, bestEffort: false, failures: failures + (first ? 1 : 0),
                    policy: context.options.retry, acknowledges: { Self.acknowledges($0, eventId: planned.eventId) })
            observe(context, planned, request, outcome, response)
            switch outcome {
            case .retry(let delay, let reason):
                guard first else { break }
                failures += 1
                progress.stop = (delay, "POST \(path): \(reason)")
            case .unacknowledged(let status, let delay):
                guard first else { break }
                failures += 1
                var said = ""
                if case .http(_, _, let body) = response { said = redacted(ConfigurationWarnings.saying(body)) }
                context.warnOnce(
                    "sentry unacknowledged",
                    "POST \(configuration.envelopeURL.absoluteString) answered \(status)\(said) without Sentry's"
                        + " success answer ({\"id\": <event id>}): something other than a Sentry server answers there;"
                        + " check the DSN's host. Events stay queued (up to maxQueueSize) and flush() returns false"
                        + " until the server answers as Sentry does.")
                progress.stop = (delay, "POST \(path): HTTP \(status) without Sentry's success answer")
            case .misconfigured(let status, let delay):
                guard first else { break }
                failures += 1
                var body: [UInt8] = []
                if case .http(_, _, let answer) = response { body = answer }
                context.warnOnce("sentry \(status)", misconfiguration(status, body: body))
                progress.stop = (delay, "POST \(path): HTTP \(status), a configuration problem")
            case .dropped(let reason):
                context.log("POST \(path): dropped \(planned.label): \(reason)")
                progress.removable += planned.ids
            case .delivered, .halveBatch:
                progress.removable += planned.ids
            }
        }
        return false
    }

    /// The batch's envelopes, oldest first, each made when the delivery loop comes to it, so reading the next
    /// record overlaps the envelopes in flight; records with no Sentry form are logged and finished.
    private struct Envelopes {
        let entries: [QueueEntry]
        let endpoint: SentryEndpoint
        let configuration: SentryConfiguration
        let options: CohorlyOptions
        var index = 0

        /// Whether every record was taken.
        var isEmpty: Bool { index >= entries.count }

        /// The next envelope (nil: none is left); records it passes over are added to `removable`.
        mutating func next(removable: inout [Int64], context: DeliveryContext) -> Planned? {
            let (endpoint, configuration, options) = (endpoint, configuration, options)
            while index < entries.count {
                let entry = entries[index]
                index += 1
                switch entry.kind {
                case .launch:
                    var ids = [entry.id]
                    var items = [SentryEnvelope.Item(type: "session", payload: Array(entry.json.utf8))]
                    while index < entries.count, entries[index].kind == .launch,
                        ids.count < SentryDestination.maxSessionsPerEnvelope
                    {
                        ids.append(entries[index].id)
                        items.append(SentryEnvelope.Item(type: "session", payload: Array(entries[index].json.utf8)))
                        index += 1
                    }
                    let envelope = SentryEnvelope(eventId: nil, items: items)
                    return Planned(
                        ids: ids, request: { envelope.request(endpoint, options: options) }, categories: ["session"],
                        label: "\(ids.count) session update(s)")
                case .exception:
                    guard let record = QueuedException(json: entry.json) else {
                        context.log("dropped an unreadable queued exception")
                        removable.append(entry.id)
                        continue
                    }
                    let eventId = SentryEvent.eventId(record.insertId)
                    let session = record.properties[SentrySessions.property]
                    // The event is rendered where it is sent, several at once.
                    let request: @Sendable () -> TransportRequest = {
                        var items = [
                            SentryEnvelope.Item(
                                type: "event", payload: SentryEvent.json(record, configuration: configuration))
                        ]
                        if let session {
                            items.append(SentryEnvelope.Item(type: "session", payload: Array(session.jsonString.utf8)))
                        }
                        return SentryEnvelope(eventId: eventId, items: items).request(endpoint, options: options)
                    }
                    return Planned(
                        ids: [entry.id], request: request,
                        categories: session == nil ? ["error"] : ["error", "session"], label: "event \(eventId)",
                        eventId: eventId)
                case .event, .profile:
                    context.log("dropped a queued \(entry.kind.rawValue) record: Sentry has no equivalent")
                    removable.append(entry.id)
                }
            }
            return nil
        }
    }

    private static func exchange(_ request: TransportRequest, _ transport: any Transport) -> SentryExchanges.Answer {
        if let reading = transport as? any HeaderReadingTransport { return reading.exchange(request) }
        return (transport.send(request), [:])
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

    /// Whether `body` is a Sentry server's success answer to an envelope: `{"id": "<event id>"}` naming the
    /// envelope's event (dashes and case aside); for an envelope without an event, any JSON object (Relay answers
    /// `{}`). An empty body is taken too: Bugsink answers every accepted envelope so.
    static func acknowledges(_ body: [UInt8], eventId: String?) -> Bool {
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return true }
        guard let answer = CohorlyValue(bytes: body)?.objectValue else { return false }
        guard let eventId else { return true }
        func normalized(_ id: String) -> String { id.lowercased().filter { $0 != "-" } }
        return answer["id"]?.stringValue.map { normalized($0) == normalized(eventId) } ?? false
    }

    /// What a 401, 403 or 404 from the envelope endpoint means: the URL, the status, the server's reason (the DSN's
    /// key taken out) and the fix.
    func misconfiguration(_ status: Int, body: [UInt8]) -> String {
        let fix =
            status == 404
            ? "no Sentry project there: check the DSN's host, path and project id"
            : "the DSN's key or project was refused: check the DSN's key and project id"
        return "POST \(configuration.envelopeURL.absoluteString) answered \(status)"
            + "\(redacted(ConfigurationWarnings.saying(body))): \(fix). Events stay queued (up to maxQueueSize) and"
            + " flush() returns false until this is fixed."
    }

    /// `text` with the DSN's key taken out (a server may quote the DSN it was sent, as Bugsink does).
    func redacted(_ text: String) -> String {
        configuration.publicKey.isEmpty ? text : text.replacingOccurrences(of: configuration.publicKey, with: "<key>")
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
