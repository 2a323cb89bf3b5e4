/// An event as the queue holds it, whatever the destination: `{"event": name, "properties": {…}}` with the
/// caller's properties over the super properties over the automatic ones, and `distinct_id`, `time` and
/// `$insert_id` always set (from the event when it set them).
package struct EventRecord: Sendable {
    package var name: String
    /// The record's JSON text.
    package var json: String
    /// The effective `$insert_id` (nil only when the event set a non-string one).
    package var insertId: String?
    /// The effective `distinct_id` (any JSON value: the destination decides whether it is acceptable).
    package var distinctId: CohorlyValue
    /// The effective `time` (unix milliseconds unless the event set something else).
    package var time: CohorlyValue

    /// The record for a tracked event. Written straight to JSON, layer by layer (caller, then super, then
    /// automatic, each skipping keys a higher layer set), instead of merging dictionaries: the persister is the
    /// delivery pipeline's hot path.
    init(_ event: PendingEvent, automatic: AutomaticProperties, random: inout FastRandom) {
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
        let time = effective("time") ?? .int(Int(event.time))
        if effective("time") == nil { member("time", time) }
        var insertId = effective("$insert_id")
        if insertId == nil {
            let generated = CohorlyValue.string(UUIDv4.make(using: &random))
            member("$insert_id", generated)
            insertId = generated
        }
        out += "}}"
        self.name = event.name
        self.json = out
        self.insertId = insertId?.stringValue
        self.distinctId = distinctId
        self.time = time
    }

    /// The record for a prepared event (its properties final, `distinct_id` included).
    package init(prepared event: PreparedEvent) {
        name = event.name
        json = CohorlyValue.object(["event": .string(event.name), "properties": .object(event.properties)]).jsonString
        insertId = event.properties["$insert_id"]?.stringValue
        distinctId = event.properties["distinct_id"] ?? .null
        time = event.properties["time"] ?? .null
    }

    /// The admission facts of an exception record (its `json` left empty: the queue holds the record itself).
    package init(summarizing record: QueuedException) {
        name = QueuedException.eventName
        json = ""
        insertId = record.insertId
        distinctId = record.properties["distinct_id"] ?? .null
        time = .int(Int(record.timestampMs))
    }

    /// The name and properties of a queued event record's JSON (nil when it is not one).
    package static func decode(_ json: String) -> (name: String, properties: Properties)? {
        guard let object = CohorlyValue(json: json)?.objectValue, let name = object["event"]?.stringValue else {
            return nil
        }
        return (name, object["properties"]?.objectValue ?? [:])
    }
}
