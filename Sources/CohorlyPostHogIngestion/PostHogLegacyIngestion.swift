import CohorlyCollectorCore
import Foundation

/// PostHog's legacy capture wire, `POST /batch`, `/e` and `/capture` (each also with a trailing slash): what the
/// Cohorly client falls back to when a self-hosted PostHog answers capture V1 with 404
/// (Sources/Cohorly/PostHogDestination+Legacy.swift), and what older PostHog SDKs send.
///
/// - Bodies: `{"api_key", "batch": [event, …], "sent_at"}`, one event `{"api_key", "event", …}`, or an array of
///   events; JSON, gzip- or deflate-encoded (`Content-Encoding`). The project key is the body's `api_key`
///   (or `token` / `$token`), else each event's, else its `properties.token`.
/// - Each event `{event, distinct_id, properties, timestamp, uuid}` is mapped and stored exactly as a capture V1
///   item (``CaptureV1Ingestion/event(_:uuid:token:sdk:now:)``): a missing `uuid` is made up, a missing
///   `timestamp` is the time received; `$lib` stays the one in the properties.
/// - Answers `200 {"status": 1}` for the whole request; errors as PostHog's legacy endpoint does,
///   `{"type", "code", "detail", "attr"}`: 401 `missing_api_key` / `invalid_api_key`, 400 for a body or an event
///   it cannot read (the whole request is refused, nothing stored), 413, 415, 503, 507.
///
/// Not done: `data=` form bodies (base64, `compression=gzip-js|lz64`) and `GET` captures: every ingestion `POST`
/// must be `application/json` (Router+Policy.swift), so a web page cannot send events cross-site unasked.
struct PostHogLegacyIngestion: Sendable {
    /// The routes it answers, each also without its trailing slash (PostHogWires.swift).
    static let routes = ["/batch/", "/e/", "/capture/"]

    let store: CollectorStore
    let configuration: CollectorConfiguration
    /// Inflated bodies and parsed trees at once (ParseBudget.swift).
    let budget: ParseBudget

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "POST" else { return Self.error(405, "method_not_allowed", "use POST") }
        return CaptureV1Ingestion.parsedBody(request, configuration: configuration, budget: budget, error: Self.error) {
            store($0)
        }
    }

    private func store(_ document: JSONValue) -> HTTPResponse {
        let items: [JSONValue]
        if let batch = document["batch"] {
            guard let array = batch.arrayValue else { return Self.error(400, "invalid_payload", "batch is not a list") }
            items = array
        } else if let array = document.arrayValue {
            items = array
        } else if document.objectValue != nil {
            items = [document]
        } else {
            return Self.error(400, "invalid_payload", "expected {\"api_key\", \"batch\": [...]} or an event")
        }
        guard !items.isEmpty else { return Self.error(400, "invalid_payload", "no events in the request") }
        guard let token = Self.token(document) ?? items.lazy.compactMap(Self.token).first else {
            return Self.error(
                401, "missing_api_key", "no project API key (api_key in the body)", type: "authentication_error")
        }
        guard !token.hasPrefix("phx_"), configuration.accepts(token: token) else {
            return Self.error(401, "invalid_api_key", "unknown project API key", type: "authentication_error")
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var uuids = Set<String>()
        var events: [CollectorStore.NewEvent] = []
        for item in items {
            guard var fields = item.objectValue else {
                return Self.error(400, "invalid_payload", "an event is not an object")
            }
            let uuid: String
            if let given = fields["uuid"] {
                guard let text = given.stringValue, let canonical = UUIDText.canonical(text) else {
                    return Self.error(400, "invalid_event_uuid", "uuid is not a UUID", attr: "uuid")
                }
                uuid = canonical
            } else {
                uuid = UUID().uuidString.lowercased()
            }
            guard uuids.insert(uuid).inserted else { continue }  // one event sent twice in one batch
            if fields["timestamp"] == nil { fields["timestamp"] = .string(RFC3339.format(milliseconds: now)) }
            fields["options"] = nil  // a V1 field: a legacy event carries its options among its properties
            switch CaptureV1Ingestion.event(.object(fields), uuid: uuid, token: token, sdk: nil, now: now) {
            case .success(let event): events.append(event)
            case .failure(let tag) where tag.rawValue == "performance_event": continue  // not stored, as on V1
            case .failure(let tag): return Self.error(400, tag.rawValue, "an event was refused: \(tag.rawValue)")
            }
        }
        do {
            _ = try store.insert(writing: events, receivedAt: now)
        } catch  where CollectorStore.isFull(error) {
            return Self.error(507, "storage_full", "storage full: \(error)", type: "server_error")
        } catch {
            return Self.error(500, "internal_error", "storage error: \(error)", type: "server_error")
        }
        return .json(200, ["status": 1])
    }

    /// The project key of a body or an event: `api_key`, `token` or `$token`, else `properties.token`.
    static func token(_ value: JSONValue) -> String? {
        for key in ["api_key", "token", "$token"] {
            if let token = value[key]?.stringValue, !token.isEmpty { return token }
        }
        return value["properties"]?["token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// PostHog's legacy error body; `type` is `validation_error` for a 4xx, `server_error` for a 5xx, unless said.
    static func error(
        _ status: Int, _ code: String, _ detail: String, type: String? = nil, attr: String? = nil
    ) -> HTTPResponse {
        let kind = type ?? (status >= 500 ? "server_error" : "validation_error")
        return .json(
            status,
            [
                "type": .string(kind), "code": .string(code), "detail": .string(detail),
                "attr": attr.map(JSONValue.string) ?? .null,
            ])
    }

    /// The same, as ``CaptureV1Ingestion/parsedBody(_:configuration:budget:error:_:)`` makes it.
    static func error(_ status: Int, _ code: String, _ detail: String) -> HTTPResponse {
        error(status, code, detail, type: nil, attr: nil)
    }
}
