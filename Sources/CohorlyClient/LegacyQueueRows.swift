import Foundation

/// Rows written by versions before the queue held wire-neutral records: each row named the endpoint it was
/// encoded for (`track`, `engage`, `alias`, the capture wire's `i/v1/analytics/events`) and held that wire's JSON. They
/// are read as the records they stand for, so nothing queued before an upgrade is lost (and each destination
/// still sees only records it can encode).
enum LegacyQueueRows {
    /// The record a stored row stands for: a current kind as it is, a legacy endpoint's JSON converted; nil when
    /// the row is unreadable. `optionProperties`: the properties a capture item moved into its `options`
    /// (``Destination/legacyOptionProperties``).
    static func entry(
        id: Int64, stored kind: String, insertId: String?, json: String, optionProperties: OptionProperties
    ) -> QueueEntry? {
        if let current = RecordKind(rawValue: kind) {
            return QueueEntry(id: id, kind: current, insertId: insertId, json: json)
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        switch kind {
        case "session":
            // The launch records' kind before it was named for what it is.
            return QueueEntry(id: id, kind: .launch, insertId: insertId, json: json)
        case "track":
            // `/track` rows are `{"event", "properties"}` with complete properties: an event record already.
            return QueueEntry(id: id, kind: .event, insertId: insertId, json: json)
        case "i/v1/analytics/events":
            guard let item = CohorlyValue(json: json)?.objectValue else { return nil }
            let event = captureItemEvent(item, optionProperties: optionProperties)
            return QueueEntry(id: id, kind: .event, insertId: event.insertId ?? insertId, json: event.json)
        case "engage":
            guard let object = CohorlyValue(json: json)?.objectValue,
                let distinctId = object["distinct_id"]?.stringValue,
                let (operation, value) = object.first(where: { $0.key != "distinct_id" })
            else { return nil }
            let record = ProfileOperation.people(
                operation: operation, value: value, distinctId: distinctId, time: now)
            return QueueEntry(id: id, kind: .profile, insertId: nil, json: record.json)
        case "alias":
            guard let object = CohorlyValue(json: json)?.objectValue, let alias = object["alias"]?.stringValue,
                let distinctId = object["distinct_id"]?.stringValue
            else { return nil }
            let record = ProfileOperation.alias(alias: alias, distinctId: distinctId, time: now)
            return QueueEntry(id: id, kind: .profile, insertId: nil, json: record.json)
        default:
            return nil
        }
    }

    /// A capture item as an event record: its uuid becomes the `$insert_id`, its timestamp the `time`, its
    /// `options` (those `optionProperties` names) and session fields the properties they were lifted from.
    static func captureItemEvent(_ item: Properties, optionProperties: OptionProperties) -> (
        json: String, insertId: String?
    ) {
        var properties = item["properties"]?.objectValue ?? [:]
        properties["distinct_id"] = item["distinct_id"]
        properties["$insert_id"] = item["uuid"]
        if let time = item["timestamp"]?.stringValue.flatMap(RFC3339.milliseconds) {
            properties["time"] = .int(Int(time))
        }
        for key in ["session_id", "window_id"] where item[key] != nil { properties["$" + key] = item[key] }
        let options = item["options"]?.objectValue ?? [:]
        for (property, option) in optionProperties where options[option] != nil {
            properties[property] = options[option]
        }
        let event = CohorlyValue.object(["event": item["event"] ?? "", "properties": .object(properties)])
        return (event.jsonString, item["uuid"]?.stringValue)
    }
}
