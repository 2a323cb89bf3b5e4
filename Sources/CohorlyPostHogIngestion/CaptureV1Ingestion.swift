import CohorlyCollectorCore
import Foundation

/// PostHog capture V1, `POST /i/v1/analytics/events` (docs/posthog.md "What goes on the wire"), so the PostHog
/// destination
/// runs end to end on one machine: the seven headers checked as PostHog checks them, gzip or zlib bodies
/// inflated, whole-batch errors as `{"error","error_description"}` with PostHog's tags, per-event results, and
/// events stored like `/track` ones (deduplicated by uuid), so `events list` and `crashes list/show` see them.
///
/// Not done here: skew correction (`PostHog-Request-Timestamp` is checked, not applied), `br`/`zstd` bodies
/// (415 `unsupported_encoding`), cookieless mode, billing limits.
struct CaptureV1Ingestion: Sendable {
    /// The route it answers.
    static let path = "/i/v1/analytics/events"

    let store: CollectorStore
    let configuration: CollectorConfiguration
    /// Inflated bodies and parsed trees at once (ParseBudget.swift).
    let budget: ParseBudget

    /// Distinct ids PostHog accepts with person processing disabled (`ILLEGAL_DISTINCT_IDS`, abridged).
    static let illegalDistinctIds: Set<String> = [
        "anonymous", "guest", "distinctid", "distinct_id", "id", "not_authenticated", "email", "undefined", "true",
        "false", "0", "null", "none", "nan", "[object object]", "\"\"",
    ]

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "POST" else { return Self.error(405, "method_not_allowed", "use POST") }
        let token: String
        switch Self.bearer(request.header("Authorization")) {
        case .missing: return Self.error(401, "missing_authorization", "Authorization: Bearer <project token>")
        case .notBearer: return Self.error(400, "invalid_header_value", "Authorization must use the Bearer scheme")
        case .token(let value):
            guard !value.hasPrefix("phx_"), configuration.accepts(token: value) else {
                return Self.error(401, "invalid_api_token", "unknown project token")
            }
            token = value
        }
        let mime = request.header("Content-Type")?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
        guard mime?.lowercased() == "application/json" else {
            return Self.error(415, "unsupported_content_type", "Content-Type must be application/json")
        }
        if let problem = Self.headerProblem(request) { return Self.error(400, problem.tag, problem.description) }
        return Self.parsedBody(request, configuration: configuration, budget: budget, error: Self.error) {
            handle(request, token: token, document: $0)
        }
    }

    /// The body inflated and parsed within the budget, handed to `use`; or the answer refusing it, made by `error`
    /// from a status, PostHog's tag and a description (capture V1 and the legacy wire, PostHogLegacyIngestion.swift,
    /// decode one way and answer in their own shapes).
    static func parsedBody(
        _ request: HTTPRequest, configuration: CollectorConfiguration, budget: ParseBudget,
        error: (Int, String, String) -> HTTPResponse, _ use: (JSONValue) -> HTTPResponse
    ) -> HTTPResponse {
        func busy() -> HTTPResponse {
            var answer = error(503, "service_unavailable", ParseBudget.busyReason)
            answer.headers.append(("Retry-After", "1"))
            return answer
        }
        if request.bodyTooLarge || request.body.count > configuration.maxBodyBytes {
            return error(413, "payload_too_large", "body over \(configuration.maxBodyBytes) bytes")
        }
        let body: [UInt8]
        let held: Int
        switch budget.inflate(request, limit: configuration.maxInflatedBytes) {
        case .success(let decoded): (body, held) = decoded
        case .failure(.decode(.tooLarge(let limit))):
            return error(413, "payload_too_large", "inflated body over \(limit) bytes")
        case .failure(.decode(.corrupt(let reason))):
            return error(400, "request_decoding_error", "cannot inflate the body: \(reason)")
        case .failure(.decode(.unsupported(let encoding))):
            return error(415, "unsupported_encoding", "Content-Encoding \(encoding) is not supported here")
        case .failure(.busy): return busy()
        }
        guard !body.isEmpty else {
            budget.release(held)
            return error(400, "empty_body", "the body is empty")
        }
        switch budget.parse(body, holding: held, use) {
        case .success(let answer): return answer
        case .failure(.invalid): return error(400, "request_parsing_error", "the body is not JSON")
        case .failure(.tooLarge(let values)):
            return error(413, "payload_too_large", budget.tooLargeReason(values: values))
        case .failure(.busy): return busy()
        }
    }

    private func handle(_ request: HTTPRequest, token: String, document: JSONValue) -> HTTPResponse {
        guard let batch = document["batch"]?.arrayValue, document["created_at"].flatMap(Self.timestamp) != nil
        else {
            return Self.error(400, "invalid_batch", "expected {\"created_at\": RFC 3339, \"batch\": [...]}")
        }
        guard !batch.isEmpty else { return Self.error(400, "empty_batch", "the batch is empty") }
        var uuids = Set<String>()
        for item in batch {
            guard let text = item["uuid"]?.stringValue else {
                return Self.error(400, "missing_event_uuid", "every event needs a uuid")
            }
            guard let uuid = UUIDText.canonical(text) else {
                return Self.error(400, "invalid_event_uuid", "\(text) is not a UUID")
            }
            guard uuids.insert(uuid).inserted else {
                return Self.error(400, "duplicate_event_uuid", "uuid \(uuid) appears twice in the batch")
            }
        }
        let sdk = Self.sdkInfo(request.header("PostHog-Sdk-Info"))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var results: [String: JSONValue] = [:]
        var events: [CollectorStore.NewEvent] = []
        for item in batch {
            let uuid = item["uuid"]?.stringValue.flatMap(UUIDText.canonical) ?? ""
            switch Self.event(item, uuid: uuid, token: token, sdk: sdk, now: now) {
            case .failure(let tag): results[uuid] = ["result": "drop", "details": .string(tag.rawValue)]
            case .success(let event):
                events.append(event)
                results[uuid] =
                    Self.illegalDistinctIds.contains(event.distinctId.lowercased())
                    ? ["result": "warning", "details": "person_processing_disabled"] : ["result": "ok"]
            }
        }
        do {
            _ = try store.insert(writing: events, receivedAt: now)
        } catch  where CollectorStore.isFull(error) {
            return Self.error(507, "storage_full", "storage full: \(error)")
        } catch {
            return Self.error(500, "internal_error", "storage error: \(error)")
        }
        return .json(
            200, ["results": .object(results)],
            headers: request.header("PostHog-Request-Id").map { [("PostHog-Request-Id", $0)] } ?? [])
    }

    /// A per-event drop reason (the `details` tag).
    struct DropTag: Error {
        let rawValue: String
    }

    /// The stored event for one batch item, its crash decoded (ExceptionEventDecoding.swift), its properties' text
    /// not written yet
    /// (``CollectorStore/insert(writing:receivedAt:)`` writes it), or why it is dropped.
    static func event(_ item: JSONValue, uuid: String, token: String, sdk: (lib: String, version: String)?, now: Int64)
        -> Result<CollectorStore.NewEvent, DropTag>
    {
        guard let name = item["event"]?.stringValue, !name.isEmpty, name.utf8.count <= 200 else {
            return .failure(DropTag(rawValue: "invalid_event_name"))
        }
        guard name != "$performance_event" else { return .failure(DropTag(rawValue: "performance_event")) }
        let distinctId = item["distinct_id"]?.stringValue?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !distinctId.isEmpty, distinctId.utf8.count <= 200 else {
            return .failure(DropTag(rawValue: "invalid_distinct_id"))
        }
        guard var time = item["timestamp"].flatMap(timestamp) else {
            return .failure(DropTag(rawValue: "invalid_timestamp"))
        }
        time = min(time, now + 23 * 3_600_000)  // more than 23 h ahead: clamped, as PostHog does
        guard var properties = (item["properties"] ?? .object([:])).objectValue else {
            return .failure(DropTag(rawValue: "invalid_properties"))
        }
        guard JSONValue.object(properties).nestingDepth() <= NestingLimit.stored else {
            return .failure(DropTag(rawValue: "properties_too_deep"))
        }
        guard (item["options"] ?? .object([:])).objectValue != nil else {
            return .failure(DropTag(rawValue: "invalid_options"))
        }
        // Stored like a `/track` event: identity, time and insert id among the properties; `$lib` from the header.
        properties["distinct_id"] = .string(distinctId)
        properties["time"] = .int(Int(time))
        properties["$insert_id"] = .string(uuid)
        if let sdk {
            properties["$lib"] = .string(sdk.lib)
            properties["$lib_version"] = .string(sdk.version)
        }
        for key in ["session_id", "window_id"] {
            if let value = item[key] { properties["$" + key] = value }
        }
        return .success(
            CollectorStore.NewEvent.received(
                token: token, event: name, distinctId: distinctId, time: time, insertId: uuid,
                properties: .object(properties)))
    }

    static func timestamp(_ value: JSONValue) -> Int64? { value.stringValue.flatMap(RFC3339.milliseconds) }

    enum Bearer {
        case missing, notBearer
        case token(String)
    }

    static func bearer(_ header: String?) -> Bearer {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return .missing }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .notBearer }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? .missing : .token(token)
    }

    /// The first missing or malformed required header, with its error tag.
    static func headerProblem(_ request: HTTPRequest) -> (tag: String, description: String)? {
        for name in [
            "User-Agent", "PostHog-Sdk-Info", "PostHog-Attempt", "PostHog-Request-Id", "PostHog-Request-Timestamp",
        ] {
            guard let value = request.header(name), !value.trimmingCharacters(in: .whitespaces).isEmpty else {
                return ("missing_required_headers", "missing header \(name)")
            }
        }
        guard let attempt = request.header("PostHog-Attempt").flatMap({ Int($0) }), attempt >= 1 else {
            return ("invalid_header_value", "PostHog-Attempt must be an integer ≥ 1")
        }
        guard request.header("PostHog-Request-Id").flatMap(UUIDText.canonical) != nil else {
            return ("invalid_header_value", "PostHog-Request-Id must be a UUID")
        }
        guard request.header("PostHog-Request-Timestamp").flatMap(RFC3339.milliseconds) != nil else {
            return ("invalid_header_value", "PostHog-Request-Timestamp must be RFC 3339")
        }
        return nil
    }

    /// `<lib>/<version>` split at the last `/`; nil when malformed (then nothing is injected).
    static func sdkInfo(_ header: String?) -> (lib: String, version: String)? {
        guard let header, header.utf8.count <= 200, let slash = header.lastIndex(of: "/") else { return nil }
        let lib = header[..<slash].trimmingCharacters(in: .whitespaces)
        let version = header[header.index(after: slash)...].trimmingCharacters(in: .whitespaces)
        return lib.isEmpty || version.isEmpty ? nil : (lib, version)
    }

    static func error(_ status: Int, _ tag: String, _ description: String) -> HTTPResponse {
        .json(status, ["error": .string(tag), "error_description": .string(description), "error_uri": .null])
    }
}
