import Foundation

/// Capture V1 delivery of one batch (research/posthog.md part A §1.3–1.4):
/// - one `PostHog-Request-Id` and one `created_at` per batch, `PostHog-Attempt` 1, 2, … and a fresh
///   `PostHog-Request-Timestamp` on every attempt;
/// - 2xx: per-event results; only `retry` events are sent again; `ok`, `warning`, `drop`, `limited`, unknown or
///   missing results and an unparseable body are terminal;
/// - 408, 5xx and transport errors resend the events still pending; every other status is terminal (429 too);
///   413 halves the batch while it has more than one event;
/// - the wait before attempt n+1 is `max(min(base·2^(n−1), cap), min(Retry-After, cap))`, at most `maxRetries`
///   times; events still pending after the last attempt stay queued for the next flush.
extension PostHogDestination {
    func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome {
        guard let batch = adopt(batch, context: context) else { return .finished(delivered: false) }
        let requestId = UUIDv4.make()
        let createdAt = RFC3339.format(milliseconds: Self.nowMilliseconds())
        var pending = Array(batch.ids.indices)
        var removable: [Int64] = []
        let attempts = max(0, configuration.maxRetries) + 1
        var lastReason = ""
        for attempt in 1...attempts {
            let request = self.request(
                for: batch, indices: pending, requestId: requestId, createdAt: createdAt, attempt: attempt,
                options: context.options)
            let response = context.transport.send(request)
            var retryAfter: Double?
            switch response {
            case .http(let status, let after, let body) where (200..<300).contains(status):
                let (retry, finished) = results(body, batch: batch, indices: pending, context: context)
                removable += finished.map { batch.ids[$0] }
                context.log(
                    "POST /\(Endpoint.capture.rawValue): \(pending.count) event(s), attempt \(attempt): HTTP \(status)"
                        + (retry.isEmpty ? "" : ", \(retry.count) to retry"))
                guard !retry.isEmpty else { return .finished(delivered: true) }
                pending = retry
                retryAfter = after
                lastReason = "\(retry.count) event(s) answered retry"
            case .http(let status, let after, let body) where status == 408 || (500..<600).contains(status):
                retryAfter = after
                lastReason = "HTTP \(status)\(Self.errorTag(body))"
                context.log("POST /\(Endpoint.capture.rawValue): attempt \(attempt): \(lastReason)")
            case .http(413, _, _) where pending.count > 1:
                return .halve(size: max(1, pending.count / 2), removable: removable)
            case .http(let status, _, let body):
                drop(batch, pending, because: "HTTP \(status)\(Self.errorTag(body)), not retried", context: context)
                return .finished(delivered: false)
            case .failure(let message):
                lastReason = message
                context.log("POST /\(Endpoint.capture.rawValue): attempt \(attempt): \(message)")
            }
            guard attempt < attempts else { break }
            let delay = configuration.delay(afterAttempt: attempt, retryAfter: retryAfter)
            guard context.wait(delay) else { return .cancelled(removable: removable) }
        }
        return .keep(
            removable: removable, delay: configuration.maxRetryDelay,
            reason: "\(lastReason) after \(attempts) attempt(s); \(pending.count) event(s) kept for the next flush")
    }

    static func nowMilliseconds() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// The request for the events of `batch` at `indices`.
    func request(
        for batch: QueueBatch, indices: [Int], requestId: String, createdAt: String, attempt: Int,
        options: CohorlyOptions
    ) -> TransportRequest {
        var subset = batch
        if indices.count != batch.ids.count { subset.records = indices.map { batch.records[$0] } }
        let migration = configuration.historicalMigration ? ",\"historical_migration\":true" : ""
        var body = subset.joined(prefix: "{\"created_at\":\"\(createdAt)\"\(migration),\"batch\":[", suffix: "]}")
        var headers = [
            ("Authorization", "Bearer \(configuration.apiKey)"), ("Content-Type", "application/json"),
            ("User-Agent", sdkInfo), ("PostHog-Sdk-Info", sdkInfo), ("PostHog-Attempt", String(attempt)),
            ("PostHog-Request-Id", requestId),
            ("PostHog-Request-Timestamp", RFC3339.format(milliseconds: Self.nowMilliseconds())),
        ]
        if configuration.compression, let compressed = Gzip.compress(body) {
            body = compressed
            headers.append(("Content-Encoding", "gzip"))
        }
        return TransportRequest(
            url: configuration.host.appendingPathComponent(Endpoint.capture.rawValue), headers: headers, body: body,
            timeout: options.retry.requestTimeout, connectTimeout: options.retry.connectTimeout)
    }

    /// Reads a 2xx body's per-event results: the indices to send again (`retry`) and the finished ones. Drops and
    /// limits are logged with their details; an unparseable body finishes everything.
    private func results(_ body: [UInt8], batch: QueueBatch, indices: [Int], context: DeliveryContext)
        -> (retry: [Int], finished: [Int])
    {
        guard let results = CohorlyValue(bytes: body)?["results"]?.objectValue else {
            context.log("2xx answer without readable per-event results: \(indices.count) event(s) taken as done")
            return ([], indices)
        }
        var retry: [Int] = []
        var finished: [Int] = []
        var refused: [String: [Int]] = [:]
        for index in indices {
            let result = batch.insertId(at: index).flatMap { results[$0] }
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
            drop(batch, dropped, because: "answered \(reason)", context: context)
        }
        return (retry, finished)
    }

    /// Logs the events of `batch` at `indices` as dropped, by name and uuid.
    func drop(_ batch: QueueBatch, _ indices: [Int], because reason: String, context: DeliveryContext) {
        guard context.options.debug else { return }
        let names = indices.prefix(20).map { index -> String in
            let name = CohorlyValue(json: batch.records[index])?["event"]?.stringValue ?? "?"
            return "\"\(name)\" \(batch.insertId(at: index) ?? "-")"
        }
        let more = indices.count > 20 ? ", and \(indices.count - 20) more" : ""
        context.log("dropped \(indices.count) event(s) (\(reason)): \(names.joined(separator: ", "))\(more)")
    }

    /// `: <error tag>` from a non-2xx body, when it has one.
    static func errorTag(_ body: [UInt8]) -> String {
        CohorlyValue(bytes: body)?["error"]?.stringValue.map { " \($0)" } ?? ""
    }

    /// A batch queued for another destination (the app switched): `/track` events become capture items; profile
    /// and alias records cannot be sent here and are dropped with a log line.
    private func adopt(_ batch: QueueBatch, context: DeliveryContext) -> QueueBatch? {
        switch batch.endpoint {
        case .capture: return batch
        case .track:
            var adopted = batch
            adopted.endpoint = .capture
            adopted.insertIds = []
            adopted.records = batch.records.map { json in
                let object = CohorlyValue(json: json)
                let event = PreparedEvent(
                    name: object?["event"]?.stringValue ?? "", properties: object?["properties"]?.objectValue ?? [:])
                let record = encode(prepared: event)
                adopted.insertIds.append(record.insertId)
                return record.json
            }
            return adopted
        case .engage, .alias:
            context.log(
                "dropped \(batch.ids.count) \(batch.endpoint.path) record(s) queued for the Cohorly API: PostHog has no such endpoint"
            )
            return nil
        }
    }
}
