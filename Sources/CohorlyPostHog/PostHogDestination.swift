import CohorlyClient
import Foundation

/// PostHog capture V1 (docs/posthog.md "What goes on the wire"): every queued record becomes one batch item
/// `{event, uuid, distinct_id, timestamp, options, properties}` for `POST /i/v1/analytics/events` when it is
/// sent; identity and profile calls become `$identify`, `$create_alias` and `$set` events. Delivery (attempts,
/// per-event results, backoff) is in `PostHogDestination+Delivery.swift`.
final class PostHogDestination: Destination, @unchecked Sendable {
    let configuration: PostHogConfiguration
    /// `PostHog-Sdk-Info` and `User-Agent`: `<lib>/<version>` (PostHog derives `$lib`/`$lib_version` from it).
    let sdkInfo = "\(AutomaticProperties.libraryName)/\(AutomaticProperties.libraryVersion)"
    /// The automatic properties of the `$identify`, `$create_alias` and `$set` events.
    let automatic = AutomaticProperties()
    /// The capture path.
    static let path = "i/v1/analytics/events"

    /// Whether batches go to the legacy `/batch` endpoint: from the start when configured so, and for the rest
    /// of the launch after the host answered V1 with 404 (PostHogDestination+Legacy.swift). Only touched by the
    /// delivery thread.
    var legacyWire: Bool

    init(configuration: PostHogConfiguration) {
        self.configuration = configuration
        legacyWire = configuration.captureEndpoint == .legacyBatch
    }

    var persistedDescription: String? { configuration.persisted }

    /// One batch item: its JSON and uuid (the per-event results' key), or why PostHog would refuse it.
    struct Item {
        var name: String
        var json: String
        var uuid: String
        var problem: String?
    }

    /// Legacy properties that move into the item's `options`, as every PostHog SDK moves them.
    static let optionProperties: [(property: String, option: String)] = [
        ("$cookieless_mode", "cookieless_mode"), ("$ignore_sent_at", "disable_skew_correction"),
        ("$product_tour_id", "product_tour_id"), ("$process_person_profile", "process_person_profile"),
    ]
    var legacyOptionProperties: OptionProperties { Self.optionProperties }

    /// Properties that become part of the item (or the `PostHog-Sdk-Info` header) instead of staying properties.
    static let liftedProperties: Set<String> = Set(
        ["distinct_id", "time", "$insert_id", "token", "$lib", "$lib_version"] + optionProperties.map(\.property))

    func problem(with event: EventRecord) -> String? {
        var problems: [String] = []
        _ = Self.check(name: event.name, distinctId: event.distinctId, fallbackId: "", problems: &problems)
        _ = Self.timestamp(event.time, fallback: 0, problems: &problems)
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }

    func problem(with operation: ProfileOperation) -> String? {
        guard case .people(let name, _, _, _) = operation else { return nil }
        switch name {
        case "$set", "$set_once", "$unset": return nil
        case "$add": return Self.unsupported("people.increment", "PostHog person properties cannot be incremented")
        default:
            return Self.unsupported("people.deleteUser", "capture cannot delete a person (use PostHog's persons API)")
        }
    }

    private static func unsupported(_ call: String, _ why: String) -> String {
        "dropped \(call): no PostHog equivalent (\(why))"
    }

    /// The batch item a queued record becomes.
    func item(for entry: QueueEntry, random: inout FastRandom) -> Item {
        let now = Self.nowMilliseconds()
        switch entry.kind {
        case .event:
            if let item = item(eventJSON: entry.json, time: now, random: &random) { return item }
            return Item(name: "?", json: "", uuid: "", problem: "unreadable queued event")
        case .exception:
            guard let event = QueuedException(json: entry.json)?.event else {
                return Item(name: "?", json: "", uuid: "", problem: "unreadable queued exception")
            }
            return item(event.name, layers: [event.properties], distinctId: "", time: now, random: &random)
        case .launch:
            return Item(name: "launch", json: "", uuid: "", problem: "another destination's launch record")
        case .profile:
            guard let operation = ProfileOperation(json: entry.json) else {
                return Item(name: "?", json: "", uuid: "", problem: "unreadable queued profile operation")
            }
            return item(for: operation, random: &random)
        }
    }

    private func item(for operation: ProfileOperation, random: inout FastRandom) -> Item {
        let name: String
        var own: Properties
        let time: Int64
        switch operation {
        case .identify(let anonymousId, _, let set, let setOnce, let at):
            (name, time) = ("$identify", at)
            own = ["$anon_distinct_id": .string(anonymousId)]
            if !set.isEmpty { own["$set"] = .object(set) }
            if !setOnce.isEmpty { own["$set_once"] = .object(setOnce) }
        case .alias(let alias, _, let at):
            (name, own, time) = ("$create_alias", ["alias": .string(alias)], at)
        case .people(let operation, let value, _, let at):
            (name, own, time) = ("$set", [operation: value], at)
        }
        return item(
            name, layers: [own, automatic.values], distinctId: operation.distinctId, time: time, random: &random)
    }

    /// The effective distinct id, with the problems of it and of the name.
    private static func check(
        name: String, distinctId value: CohorlyValue?, fallbackId: String, problems: inout [String]
    ) -> String {
        if name.isEmpty || name.utf8.count > 200 { problems.append("the event name must have 1 to 200 characters") }
        let distinctId: String
        switch value {
        case .string(let id)?: distinctId = id
        case .int(let id)?: distinctId = String(id)
        case nil: distinctId = fallbackId
        default: distinctId = ""
        }
        let trimmedCount = distinctId.trimmingCharacters(in: .whitespaces).utf8.count
        if trimmedCount == 0 || trimmedCount > 200 {
            problems.append("distinct_id must be a string or integer of 1 to 200 characters")
        }
        return distinctId
    }

    /// The item's timestamp (unix milliseconds) from a `time` value.
    private static func timestamp(_ value: CohorlyValue?, fallback: Int64, problems: inout [String]) -> Int64 {
        switch value {
        case nil: return fallback
        case .int(let milliseconds)?: return Int64(milliseconds)
        case .double(let milliseconds)? where milliseconds.isFinite && abs(milliseconds) < 1e15:
            return Int64(milliseconds)
        case .string(let text)?:
            if let parsed = RFC3339.milliseconds(text) { return parsed }
            problems.append("timestamp \"\(text)\" is not an RFC 3339 date-time")
        case let other?: problems.append("timestamp \(other.jsonString) is neither unix milliseconds nor RFC 3339")
        }
        return fallback
    }

    /// One batch item from property layers (highest first). Reserved properties (`distinct_id`, `time`,
    /// `$insert_id`, …) are taken from the highest layer that has them, else from `distinctId` and `time`.
    func item(
        _ name: String, layers: [Properties], distinctId fallbackId: String, time fallbackTime: Int64,
        random: inout FastRandom
    ) -> Item {
        func effective(_ key: String) -> CohorlyValue? {
            for layer in layers { if let value = layer[key] { return value } }
            return nil
        }
        return item(name, effective: effective, distinctId: fallbackId, time: fallbackTime, random: &random) {
            out, first in
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
        }
    }

    /// The item of a queued event record, its properties copied as they are (only the reserved ones are parsed):
    /// the send-time encoding stays as cheap as writing the record was. Nil when the record is not
    /// `{"event": …, "properties": {…}}`.
    func item(eventJSON json: String, time fallbackTime: Int64, random: inout FastRandom) -> Item? {
        let bytes = Array(json.utf8)
        guard let record = JSONMembers(bytes), let nameRange = record["event"],
            let name = CohorlyValue(bytes: Array(bytes[nameRange]))?.stringValue,
            let properties = JSONMembers(bytes, range: record["properties"] ?? 0..<0)
        else { return nil }
        var parsed: [String: CohorlyValue?] = [:]
        func effective(_ key: String) -> CohorlyValue? {
            if let known = parsed[key] { return known }
            let value = properties.value(key)
            parsed[key] = value
            return value
        }
        return item(name, effective: effective, distinctId: "", time: fallbackTime, random: &random) { out, first in
            for member in properties.members where !Self.liftedProperties.contains(member.key) {
                if !first { out += "," }
                first = false
                out += properties.text(member.keyText)
                out += ":"
                out += properties.text(member.value)
            }
        }
    }

    /// One batch item: the reserved fields from `effective`, the properties written by `writeProperties`.
    private func item(
        _ name: String, effective: (String) -> CohorlyValue?, distinctId fallbackId: String,
        time fallbackTime: Int64, random: inout FastRandom,
        writeProperties: (_ out: inout String, _ first: inout Bool) -> Void
    ) -> Item {
        var problems: [String] = []
        let distinctId = Self.check(
            name: name, distinctId: effective("distinct_id"), fallbackId: fallbackId, problems: &problems)
        let timestamp = Self.timestamp(effective("time"), fallback: fallbackTime, problems: &problems)
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
        writeProperties(&out, &first)
        if configuration.disableGeoIP, effective("$geoip_disable") == nil {
            out += first ? "\"$geoip_disable\":true" : ",\"$geoip_disable\":true"
        }
        out += "}}"
        return Item(
            name: name, json: out, uuid: uuid, problem: problems.isEmpty ? nil : problems.joined(separator: "; "))
    }
}
