import Foundation

/// PostHog capture V1 (research/posthog.md part A): every record is one batch item
/// `{event, uuid, distinct_id, timestamp, options, properties}` queued for `POST /i/v1/analytics/events`; identity
/// and profile calls become `$identify`, `$create_alias` and `$set` events. Delivery (attempts, per-event results,
/// backoff) is in `PostHogDestination+Delivery.swift`.
final class PostHogDestination: Destination, @unchecked Sendable {
    let configuration: PostHogConfiguration
    /// `PostHog-Sdk-Info` and `User-Agent`: `<lib>/<version>` (PostHog derives `$lib`/`$lib_version` from it).
    let sdkInfo = "\(AutomaticProperties.libraryName)/\(AutomaticProperties.libraryVersion)"

    init(configuration: PostHogConfiguration) {
        self.configuration = configuration
    }

    var eventEndpoint: Endpoint { .capture }
    var persistedDescription: String? { configuration.persisted }

    /// Legacy properties that move into the item's `options`, as every PostHog SDK moves them.
    static let optionProperties: [(property: String, option: String)] = [
        ("$cookieless_mode", "cookieless_mode"), ("$ignore_sent_at", "disable_skew_correction"),
        ("$product_tour_id", "product_tour_id"), ("$process_person_profile", "process_person_profile"),
    ]
    /// Properties that become part of the item (or the `PostHog-Sdk-Info` header) instead of staying properties.
    static let liftedProperties: Set<String> = Set(
        ["distinct_id", "time", "$insert_id", "token", "$lib", "$lib_version"] + optionProperties.map(\.property))

    func encode(_ event: PendingEvent, automatic: AutomaticProperties, random: inout FastRandom) -> EncodedRecord {
        item(
            event.name, layers: [event.properties, event.superProperties, automatic.values],
            distinctId: event.distinctId, time: event.time, random: &random)
    }

    func encode(_ operation: ProfileOperation, automatic: AutomaticProperties, random: inout FastRandom)
        -> [EncodedRecord]
    {
        let name: String
        var own: Properties
        let distinctId: String
        let time: Int64
        switch operation {
        case .identify(let anonymousId, let id, let set, let setOnce, let at):
            (name, distinctId, time) = ("$identify", id, at)
            own = ["$anon_distinct_id": .string(anonymousId)]
            if !set.isEmpty { own["$set"] = .object(set) }
            if !setOnce.isEmpty { own["$set_once"] = .object(setOnce) }
        case .alias(let alias, let id, let at):
            (name, own, distinctId, time) = ("$create_alias", ["alias": .string(alias)], id, at)
        case .people(let operation, let value, let id, let at):
            switch operation {
            case "$set", "$set_once", "$unset": (name, own, distinctId, time) = ("$set", [operation: value], id, at)
            case "$add":
                return [Self.unsupported("people.increment", "PostHog person properties cannot be incremented")]
            default:
                return [
                    Self.unsupported(
                        "people.deleteUser", "capture cannot delete a person (use PostHog's persons API)")
                ]
            }
        }
        var record = item(name, layers: [own, automatic.values], distinctId: distinctId, time: time, random: &random)
        if let problem = record.problem { record.problem = "dropped event \"\(name)\": \(problem)" }
        return [record]
    }

    func encode(prepared event: PreparedEvent) -> EncodedRecord {
        var random = FastRandom()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        return item(event.name, layers: [event.properties], distinctId: "", time: now, random: &random)
    }

    private static func unsupported(_ call: String, _ why: String) -> EncodedRecord {
        EncodedRecord(endpoint: .capture, json: "", problem: "dropped \(call): no PostHog equivalent (\(why))")
    }

    /// One batch item from property layers (highest first). Reserved properties (`distinct_id`, `time`,
    /// `$insert_id`, …) are taken from the highest layer that has them, else from `distinctId` and `time`.
    func item(
        _ name: String, layers: [Properties], distinctId fallbackId: String, time fallbackTime: Int64,
        random: inout FastRandom
    ) -> EncodedRecord {
        func effective(_ key: String) -> CohorlyValue? {
            for layer in layers { if let value = layer[key] { return value } }
            return nil
        }
        var problems: [String] = []
        if name.isEmpty || name.utf8.count > 200 { problems.append("the event name must have 1 to 200 characters") }
        let distinctId: String
        switch effective("distinct_id") {
        case .string(let id)?: distinctId = id
        case .int(let id)?: distinctId = String(id)
        case nil: distinctId = fallbackId
        default: distinctId = ""
        }
        let trimmedCount = distinctId.trimmingCharacters(in: .whitespaces).utf8.count
        if trimmedCount == 0 || trimmedCount > 200 {
            problems.append("distinct_id must be a string or integer of 1 to 200 characters")
        }
        var timestamp = fallbackTime
        switch effective("time") {
        case nil: break
        case .int(let milliseconds)?: timestamp = Int64(milliseconds)
        case .double(let milliseconds)? where milliseconds.isFinite && abs(milliseconds) < 1e15:
            timestamp = Int64(milliseconds)
        case .string(let text)?:
            if let parsed = RFC3339.milliseconds(text) {
                timestamp = parsed
            } else {
                problems.append("timestamp \"\(text)\" is not an RFC 3339 date-time")
            }
        case let other?: problems.append("timestamp \(other.jsonString) is neither unix milliseconds nor RFC 3339")
        }
        let uuid: String
        if let insertId = effective("$insert_id")?.stringValue, !insertId.isEmpty {
            uuid = UUIDText.canonical(insertId) ?? UUIDText.derived(from: insertId)
        } else {
            uuid = UUIDv4.make(using: &random)
        }

        var out = "{\"event\":"
        out.reserveCapacity(600)
        CohorlyValue.writeString(name, into: &out)
        out += ",\"uuid\":\"" + uuid + "\",\"distinct_id\":"
        CohorlyValue.writeString(distinctId, into: &out)
        out += ",\"timestamp\":\"" + RFC3339.format(milliseconds: timestamp) + "\""
        for key in ["session_id", "window_id"] {
            if let value = effective("$" + key)?.stringValue {
                out += ",\"" + key + "\":"
                CohorlyValue.writeString(value, into: &out)
            }
        }
        out += ",\"options\":{"
        var first = true
        for (property, option) in Self.optionProperties {
            guard let value = effective(property) else { continue }
            if !first { out += "," }
            first = false
            out += "\"" + option + "\":"
            value.write(into: &out)
        }
        out += "},\"properties\":{"
        first = true
        for (index, layer) in layers.enumerated() {
            for (key, value) in layer where !Self.liftedProperties.contains(key) {
                if index > 0, layers[..<index].contains(where: { $0[key] != nil }) { continue }
                if !first { out += "," }
                first = false
                CohorlyValue.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
        }
        if configuration.disableGeoIP, effective("$geoip_disable") == nil {
            out += first ? "\"$geoip_disable\":true" : ",\"$geoip_disable\":true"
        }
        out += "}}"
        return EncodedRecord(
            endpoint: .capture, insertId: uuid, json: out,
            problem: problems.isEmpty ? nil : problems.joined(separator: "; "))
    }
}
