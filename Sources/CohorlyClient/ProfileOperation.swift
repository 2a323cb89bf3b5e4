import Foundation

/// A client call that is not a plain event: identity and profile changes. Queued as it is (its JSON), and
/// encoded by the destination when it is sent.
package enum ProfileOperation: Sendable, Equatable {
    /// `identify` moved from the anonymous id to `distinctId` (the first identify after being anonymous).
    case identify(anonymousId: String, distinctId: String, set: Properties, setOnce: Properties, time: Int64)
    /// `alias(_:)`: links `alias` to `distinctId`.
    case alias(alias: String, distinctId: String, time: Int64)
    /// A `people` operation (`$set`, `$set_once`, `$add`, `$unset`, `$delete`) with its value.
    case people(operation: String, value: CohorlyValue, distinctId: String, time: Int64)

    /// The distinct id the operation is about.
    package var distinctId: String {
        switch self {
        case .identify(_, let id, _, _, _), .alias(_, let id, _), .people(_, _, let id, _): return id
        }
    }

    /// The operation as queue JSON: `{"op": "identify" | "alias" | "people", …}`.
    package var json: String {
        let object: Properties
        switch self {
        case .identify(let anonymousId, let distinctId, let set, let setOnce, let time):
            object = [
                "op": "identify", "anonymous_id": .string(anonymousId), "distinct_id": .string(distinctId),
                "set": .object(set), "set_once": .object(setOnce), "time": .int(Int(time)),
            ]
        case .alias(let alias, let distinctId, let time):
            object = [
                "op": "alias", "alias": .string(alias), "distinct_id": .string(distinctId), "time": .int(Int(time)),
            ]
        case .people(let operation, let value, let distinctId, let time):
            object = [
                "op": "people", "operation": .string(operation), "value": value, "distinct_id": .string(distinctId),
                "time": .int(Int(time)),
            ]
        }
        return CohorlyValue.object(object).jsonString
    }

    /// The operation `json` describes (nil when it describes none).
    package init?(json: String) {
        guard let object = CohorlyValue(json: json)?.objectValue, let distinctId = object["distinct_id"]?.stringValue
        else { return nil }
        let time = Int64(object["time"]?.intValue ?? 0)
        switch object["op"]?.stringValue {
        case "identify":
            guard let anonymousId = object["anonymous_id"]?.stringValue else { return nil }
            self = .identify(
                anonymousId: anonymousId, distinctId: distinctId, set: object["set"]?.objectValue ?? [:],
                setOnce: object["set_once"]?.objectValue ?? [:], time: time)
        case "alias":
            guard let alias = object["alias"]?.stringValue else { return nil }
            self = .alias(alias: alias, distinctId: distinctId, time: time)
        case "people":
            guard let operation = object["operation"]?.stringValue, let value = object["value"] else { return nil }
            self = .people(operation: operation, value: value, distinctId: distinctId, time: time)
        default: return nil
        }
    }
}
