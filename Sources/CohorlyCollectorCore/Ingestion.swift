import Foundation

/// The Cohorly ingestion endpoints (`/track`, `/engage`, `/alias`) as the public docs describe them: a single
/// record or an array of up to 500, JSON only (`Content-Type: application/json`, checked by `Router.screen`), 1 MB per body, the project token in `X-Cohorly-Token` or per record
/// (the record's wins, and is stripped before storage), all-or-nothing inserts, events deduplicated by `$insert_id`.
/// A body is parsed only when its tree fits the server-wide `budget` (ParseBudget.swift): 413 when it never could,
/// 503 with `Retry-After` when the budget is taken for longer than its wait.
package struct Ingestion: Sendable {
    let store: CollectorStore
    let configuration: CollectorConfiguration
    package var budget = ParseBudget(capacity: CollectorConfiguration().parseBudgetBytes)

    enum Kind: String {
        case track, engage, alias
    }

    func handle(_ kind: Kind, _ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "POST" else { return .error(405, "use POST") }
        if let encoding = request.header("Content-Encoding")?.lowercased(), encoding != "identity" {
            return .error(415, "unsupported content encoding \(encoding): send uncompressed JSON")
        }
        if request.bodyTooLarge || request.body.count > configuration.maxBodyBytes {
            return .error(413, "payload too large (limit \(configuration.maxBodyBytes) bytes)")
        }
        switch budget.parse(request.body, { handle(kind, request, document: $0) }) {
        case .success(let answer): return answer
        case .failure(.invalid): return .error(400, "invalid json")
        case .failure(.tooLarge(let values)): return .error(413, budget.tooLargeReason(values: values))
        case .failure(.busy): return .error(503, ParseBudget.busyReason, headers: [("Retry-After", "1")])
        }
    }

    private func handle(_ kind: Kind, _ request: HTTPRequest, document: JSONValue) -> HTTPResponse {
        let records: [JSONValue]
        if case .array(let elements) = document {
            records = elements
        } else {
            records = [document]
        }
        if records.count > configuration.maxRecords {
            return .error(400, "batch too large (limit \(configuration.maxRecords) records)")
        }
        let headerToken = request.header("X-Cohorly-Token")
        var tokens: [String] = []
        for record in records {
            guard let object = record.objectValue else {
                return .error(400, "each record must be a JSON object")
            }
            let own =
                kind == .track ? object["properties"]?["token"]?.stringValue : object["token"]?.stringValue
            guard let token = own ?? headerToken, configuration.accepts(token: token) else {
                return .error(401, "invalid token")
            }
            tokens.append(token)
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            let inserted: Int
            switch kind {
            case .track:
                var events: [CollectorStore.NewEvent] = []
                for (index, record) in records.enumerated() {
                    guard let event = Self.event(record, token: tokens[index], now: now) else {
                        return .error(
                            400, "record \(index): needs \"event\" and \"properties\" with \"distinct_id\"")
                    }
                    if let properties = record["properties"], properties.nestingDepth() > NestingLimit.stored {
                        return .error(400, "record \(index): properties nest deeper than \(NestingLimit.stored) levels")
                    }
                    events.append(event)
                }
                inserted = try store.insert(writing: events, receivedAt: now)
            case .engage, .alias:
                var stored: [(token: String, json: String)] = []
                for (index, record) in records.enumerated() {
                    guard var object = record.objectValue, object["distinct_id"].flatMap(Self.idString) != nil
                    else {
                        return .error(400, "record \(index): needs \"distinct_id\"")
                    }
                    if kind == .alias, object["alias"].flatMap(Self.idString) == nil {
                        return .error(400, "record \(index): needs \"alias\"")
                    }
                    object["token"] = nil
                    if JSONValue.object(object).nestingDepth() > NestingLimit.stored {
                        return .error(400, "record \(index): nests deeper than \(NestingLimit.stored) levels")
                    }
                    stored.append((tokens[index], JSONValue.object(object).jsonString))
                }
                inserted = try store.insert(records: stored, kind: kind.rawValue, receivedAt: now)
            }
            return .json(200, ["status": 1, "inserted": .int(inserted)])
        } catch  where CollectorStore.isFull(error) {
            return .error(507, "storage full: \(error) (free space on the data directory's file system)")
        } catch {
            return .error(500, "storage error: \(error)")
        }
    }

    package static func idString(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text) where !text.isEmpty: return text
        case .int(let number): return String(number)
        default: return nil
        }
    }

    /// The event a `/track` record stands for, its crash decoded (ExceptionEventDecoding.swift) and its
    /// properties' text not written yet (``CollectorStore/insert(writing:receivedAt:)`` writes it); nil when it
    /// lacks a name or a distinct id.
    static func event(_ record: JSONValue, token: String, now: Int64) -> CollectorStore.NewEvent? {
        guard let name = record["event"]?.stringValue, !name.isEmpty,
            var properties = record["properties"]?.objectValue,
            let distinctId = properties["distinct_id"].flatMap(idString)
        else { return nil }
        properties["token"] = nil
        let time = properties["time"]?.intValue.map(Int64.init) ?? now
        let insertId = properties["$insert_id"]?.stringValue
        return CollectorStore.NewEvent.received(
            token: token, event: name, distinctId: distinctId, time: time, insertId: insertId,
            properties: .object(properties))
    }
}
