import Foundation

/// The Cohorly HTTP API (the default destination): events to `POST /track` as JSON arrays of
/// `{"event","properties"}`, profile operations to `/engage`, the first identify's link to `/alias`, the token in
/// `X-Cohorly-Token`, answers under the shared retry contract (`RetryContract`): no retry limit, failures back off.
final class CohorlyDestination: Destination, @unchecked Sendable {
    let apiHost: URL
    let token: String?
    // Only touched by the delivery thread.
    private var failures = 0

    init(apiHost: URL, token: String?) {
        self.apiHost = apiHost
        self.token = token
    }

    var eventEndpoint: Endpoint { .track }
    var persistedDescription: String? { nil }

    /// The event as sent: automatic < super < caller properties, with `distinct_id`, `time` and `$insert_id`; the
    /// problem when the server would refuse it (an empty name, or a `distinct_id` that is not a non-empty string
    /// or an integer).
    func encode(_ event: PendingEvent, automatic: AutomaticProperties, random: inout FastRandom) -> EncodedRecord {
        // Written straight to JSON, layer by layer (caller, then super, then automatic, each skipping keys a
        // higher layer set), instead of merging dictionaries: the persister is the delivery pipeline's hot path.
        let caller = event.properties
        let superProperties = event.superProperties
        func effective(_ key: String) -> CohorlyValue? { caller[key] ?? superProperties[key] }
        var out = "{\"event\":"
        out.reserveCapacity(512)
        CohorlyValue.writeString(event.name, into: &out)
        out += ",\"properties\":{"
        var first = true
        func member(_ key: String, _ value: CohorlyValue) {
            if !first { out += "," }
            first = false
            CohorlyValue.writeString(key, into: &out)
            out += ":"
            value.write(into: &out)
        }
        for (key, value) in caller { member(key, value) }
        for (key, value) in superProperties where caller[key] == nil { member(key, value) }
        for (key, value) in automatic.values where effective(key) == nil { member(key, value) }
        let distinctId = effective("distinct_id") ?? .string(event.distinctId)
        if effective("distinct_id") == nil { member("distinct_id", distinctId) }
        if effective("time") == nil { member("time", .int(Int(event.time))) }
        var insertId = effective("$insert_id")
        if insertId == nil {
            let generated = CohorlyValue.string(UUIDv4.make(using: &random))
            member("$insert_id", generated)
            insertId = generated
        }
        out += "}}"
        var problem: String?
        if event.name.isEmpty { problem = "empty event name" }
        switch distinctId {
        case .string(let id) where !id.isEmpty: break
        case .int: break
        default: problem = "distinct_id must be a non-empty string or an integer"
        }
        return EncodedRecord(endpoint: .track, insertId: insertId?.stringValue, json: out, problem: problem)
    }

    func encode(_ operation: ProfileOperation, automatic: AutomaticProperties, random: inout FastRandom)
        -> [EncodedRecord]
    {
        func record(_ endpoint: Endpoint, _ value: Properties) -> EncodedRecord {
            EncodedRecord(endpoint: endpoint, insertId: nil, json: CohorlyValue.object(value).jsonString)
        }
        switch operation {
        case .identify(let anonymousId, let distinctId, let set, let setOnce, _):
            var records = [record(.alias, ["alias": .string(anonymousId), "distinct_id": .string(distinctId)])]
            if !set.isEmpty {
                records.append(record(.engage, ["distinct_id": .string(distinctId), "$set": .object(set)]))
            }
            if !setOnce.isEmpty {
                records.append(record(.engage, ["distinct_id": .string(distinctId), "$set_once": .object(setOnce)]))
            }
            return records
        case .alias(let alias, let distinctId, _):
            return [record(.alias, ["alias": .string(alias), "distinct_id": .string(distinctId)])]
        case .people(let operation, let value, let distinctId, _):
            return [record(.engage, ["distinct_id": .string(distinctId), operation: value])]
        }
    }

    func encode(prepared event: PreparedEvent) -> EncodedRecord {
        let json = CohorlyValue.object(["event": .string(event.name), "properties": .object(event.properties)])
            .jsonString
        return EncodedRecord(endpoint: .track, insertId: event.properties["$insert_id"]?.stringValue, json: json)
    }

    func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome {
        let batch = batch.endpoint == .capture ? Self.adopt(batch) : batch
        let request = request(for: batch, options: context.options)
        let response = context.transport.send(request)
        let outcome = RetryContract.outcome(
            for: response, count: batch.ids.count, endpoint: batch.endpoint, failures: failures + 1,
            policy: context.options.retry)
        context.options.attemptObserver?(
            DeliveryAttempt(
                endpoint: batch.endpoint, count: batch.ids.count, bytes: request.body.count, outcome: outcome,
                status: response.status))
        let path = batch.endpoint.path
        switch outcome {
        case .delivered:
            context.log("POST \(path): \(batch.ids.count) record(s), \(request.body.count) bytes delivered")
            failures = 0
            return .finished(delivered: true)
        case .dropped(let reason):
            context.log("\(path): dropped \(batch.ids.count) record(s): \(reason)")
            return .finished(delivered: false)
        case .halveBatch:
            return .halve(size: max(1, batch.ids.count / 2), removable: [])
        case .retry(let delay, let reason):
            failures += 1
            return .keep(removable: [], delay: delay, reason: reason)
        }
    }

    /// PostHog capture items left queued when the app switched to the Cohorly API, as `/track` events (their uuid
    /// becomes the `$insert_id`, their timestamp the `time`).
    static func adopt(_ batch: QueueBatch) -> QueueBatch {
        var adopted = batch
        adopted.endpoint = .track
        adopted.records = batch.records.map { json in
            let item = CohorlyValue(json: json)
            var properties = item?["properties"]?.objectValue ?? [:]
            properties["distinct_id"] = item?["distinct_id"]
            properties["$insert_id"] = item?["uuid"]
            properties["time"] = item?["timestamp"]?.stringValue.flatMap(RFC3339.milliseconds).map { .int(Int($0)) }
            return CohorlyValue.object(["event": item?["event"] ?? "", "properties": .object(properties)]).jsonString
        }
        return adopted
    }

    private func request(for batch: QueueBatch, options: CohorlyOptions) -> TransportRequest {
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("X-Cohorly-Token", token)) }
        // `/alias` takes its single object as is; the others a JSON array.
        let body =
            batch.endpoint == .alias && batch.records.count == 1 ? Array(batch.records[0].utf8) : batch.joined()
        return TransportRequest(
            url: apiHost.appendingPathComponent(batch.endpoint.rawValue), headers: headers, body: body,
            timeout: options.retry.requestTimeout, connectTimeout: options.retry.connectTimeout)
    }
}
