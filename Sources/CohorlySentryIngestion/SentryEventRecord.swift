import CohorlyCollectorCore
import CohorlyCrashModel
import Foundation

/// A Sentry event item (docs/sentry.md "What maps to what") stored as the other wires store theirs: an event with an
/// exception becomes a `$exception` event in PostHog's native shape (what `CapturedException(exceptionEvent:)`
/// reads), so `cohorly crashes list/show` and `GET /api/crashes` show it like the others and symbolicate its raw
/// frames against the uploaded debug files. Its `$insert_id` is the event id as a dashed lowercase UUID: the Sentry
/// destination sends the crash's `$insert_id` as the event id, so a crash that arrives over two wires with the
/// same project token (the DSN's key) is stored once.
///
/// What maps to what: `level` → `$exception_level`; `exception.values` (oldest first) → the exception list, the
/// last (the one raised) first, each with its `mechanism` as sent; `stacktrace.frames` (oldest first, also taken
/// from the crashed thread when the exception has none) keep their fields, `package` becoming `module`, and a
/// frame marked `inline: true`, or repeating the previous frame's address under another function name, is an
/// inlined call of that frame; the other `threads.values` → `$exception_threads`; `debug_meta.images` →
/// `$debug_images`; `breadcrumbs` → `$exception_breadcrumbs`; `user.id` → distinct id; `release`, `dist`,
/// `environment`, `contexts.os` / `device.arch` and `sdk` → the properties the other wires use; `tags` and `extra`
/// → properties of their own names (the client's super properties), never over a mapped one. An event without an
/// exception (a message) is stored as `$message`.
enum SentryEventRecord {
    /// The stored event for `event` (a JSON object) under `eventId` (dashed lowercase).
    static func newEvent(_ event: [String: JSONValue], eventId: String, token: String, projectId: String, now: Int64)
        -> CollectorStore.NewEvent
    {
        var properties: [String: JSONValue] = [:]
        let user = event["user"]
        let distinctId = (user?["id"]).flatMap(Ingestion.idString) ?? user?["username"]?.stringValue ?? ""
        properties["distinct_id"] = .string(distinctId)
        let time = event["timestamp"].flatMap(milliseconds) ?? now
        properties["time"] = .int(Int(time))
        properties["$insert_id"] = .string(eventId)
        properties[CollectorStore.NewEvent.projectProperty] = .string(projectId)
        properties["$sentry_platform"] = event["platform"]
        properties["$lib"] = event["sdk"]?["name"]
        properties["$lib_version"] = event["sdk"]?["version"]
        properties["release"] = event["release"]
        properties["dist"] = event["dist"]
        properties["$environment"] = event["environment"]
        let os = event["contexts"]?["os"]
        properties["$os"] = os?["name"]
        properties["$os_version"] = os?["version"]
        properties["$os_distribution"] = os?["distribution_name"]
        properties["$kernel_version"] = os?["kernel_version"]
        properties["$arch"] = event["contexts"]?["device"]?["arch"]
        let level = event["level"]?.stringValue ?? "error"
        let name: String
        if let exceptions = values(event["exception"]), !exceptions.isEmpty {
            name = "$exception"
            properties[CapturedException.levelProperty] = .string(level)
            addException(exceptions, threads: values(event["threads"]) ?? [], to: &properties)
            properties["$debug_images"] = event["debug_meta"]?["images"]
            properties["$exception_fingerprint"] = fingerprint(event["fingerprint"])
            if let crumbs = values(event["breadcrumbs"]) {
                properties[CapturedException.breadcrumbsProperty] = .array(crumbs.map(breadcrumb))
            }
        } else {
            name = "$message"
            properties["$level"] = .string(level)
            properties["$message"] =
                event["logentry"]?["formatted"] ?? event["logentry"]?["message"] ?? event["message"]?["formatted"]
                ?? event["message"]
        }
        for source in [event["extra"], event["tags"]] {
            for (key, value) in pairs(source) where properties[key] == nil { properties[key] = value }
        }
        properties = properties.filter { $0.value != .null }
        let parsed = JSONValue.object(properties)
        return CollectorStore.NewEvent(
            token: token, event: name, distinctId: distinctId, time: time, insertId: eventId,
            propertiesJSON: parsed.jsonString, properties: parsed,
            crash: CollectorStore.NewEvent.crash(event: name, properties: parsed),
            fingerprint: properties[CollectorStore.NewEvent.fingerprintProperty])
    }

    /// The exceptions, the one raised first, with their stacks; the other threads.
    private static func addException(
        _ exceptions: [JSONValue], threads: [JSONValue], to properties: inout [String: JSONValue]
    ) {
        let threadId = exceptions.last?["thread_id"]
        let crashed = threads.first { thread in
            threadId.map { thread["id"].map(idText) == idText($0) } ?? (thread["crashed"] == .bool(true))
        }
        properties[CapturedException.exceptionListProperty] = .array(
            exceptions.reversed().enumerated().map { index, exception in
                var entry: [String: JSONValue] = [
                    "type": exception["type"] ?? .null, "value": exception["value"] ?? .null,
                    "mechanism": exception["mechanism"] ?? .null, "module": exception["module"] ?? .null,
                ]
                if let id = (exception["thread_id"] ?? (index == 0 ? crashed?["id"] : nil)).flatMap(threadNumber) {
                    entry["thread_id"] = .int(id)
                }
                let stacktrace = exception["stacktrace"] ?? (index == 0 ? crashed?["stacktrace"] : nil)
                if let stacktrace { entry["stacktrace"] = Self.stacktrace(stacktrace) }
                return .object(entry.filter { $0.value != .null })
            })
        properties[CapturedException.threadNameProperty] = crashed?["name"]
        let others = threads.filter { thread in
            guard let crashed else { return thread["crashed"] != .bool(true) }
            return thread["id"].map(idText) != crashed["id"].map(idText)
        }
        guard !others.isEmpty else { return }
        properties[CapturedException.threadsProperty] = .array(
            others.map { thread in
                var entry: [String: JSONValue] = ["name": thread["name"] ?? .null, "crashed": .bool(false)]
                if let id = thread["id"].flatMap(threadNumber) { entry["thread_id"] = .int(id) }
                if let stacktrace = thread["stacktrace"] { entry["stacktrace"] = Self.stacktrace(stacktrace) }
                return .object(entry.filter { $0.value != .null })
            })
    }

    /// A Sentry stacktrace as PostHog's raw one: same frames and order, `package` as `module`, addresses as
    /// `0x…` strings, inlined frames marked `inline: true`, and every other frame's kind under
    /// `CapturedException.frameKindKey`: the one it was sent with, else what the stacktrace's
    /// `instruction_addr_adjustment` says (`all_but_first`: the innermost frame exact, the others return
    /// addresses; `all`: return addresses; `none`: exact; otherwise none, and the reader's positional rule
    /// applies). With `none`, a return address arrives already stepped back into its call: it is stored as the
    /// return address again (one byte on, with its inlined calls), as the other wires store it.
    static func stacktrace(_ stacktrace: JSONValue) -> JSONValue {
        var frames: [[String: JSONValue]] = []
        var previous: (address: String, function: String?)?
        for frame in stacktrace["frames"]?.arrayValue ?? [] {
            guard var fields = frame.objectValue else { continue }
            for key in ["instruction_addr", "image_addr", "symbol_addr"] {
                if let number = fields[key]?.intValue, number >= 0 {
                    fields[key] = .string("0x" + String(number, radix: 16))
                }
            }
            if fields["module"] == nil, let package = fields["package"] { fields["module"] = package }
            let address = fields["instruction_addr"]?.stringValue?.lowercased()
            let function = fields["function"]?.stringValue
            if fields["inline"] == nil, let address, let previous, previous.address == address,
                function != nil, function != previous.function
            {
                fields["inline"] = .bool(true)
            }
            previous = address.map { ($0, function) }
            frames.append(fields)
        }
        let adjustment = stacktrace["instruction_addr_adjustment"]?.stringValue
        let innermost = frames.lastIndex { $0["inline"] != .bool(true) }
        var restored: JSONValue?
        for index in frames.indices {
            if frames[index]["inline"] == .bool(true) {
                if let restored { frames[index]["instruction_addr"] = restored }
                continue
            }
            restored = nil
            let kind = frames[index][kindKey]?.stringValue ?? Self.kind(adjustment, innermost: index == innermost)
            guard let kind else { continue }
            frames[index][kindKey] = .string(kind)
            if adjustment == "none", kind == Frame.Kind.returnAddress.wireName,
                let address = frames[index]["instruction_addr"]?.stringValue.flatMap(Address.init(hex:)),
                address.value < UInt64.max
            {
                restored = .string(Address(address.value + 1).description)
                frames[index]["instruction_addr"] = restored
            }
        }
        var result: [String: JSONValue] = ["type": "raw", "frames": .array(frames.map(JSONValue.object))]
        if let stop = stacktrace[CapturedException.asyncStopKey] { result[CapturedException.asyncStopKey] = stop }
        return .object(result)
    }

    private static let kindKey = CapturedException.frameKindKey

    /// The kind Sentry's `instruction_addr_adjustment` gives a frame without its own (nil: the value says none).
    private static func kind(_ adjustment: String?, innermost: Bool) -> String? {
        switch adjustment {
        case "all_but_first": return (innermost ? Frame.Kind.pc : .returnAddress).wireName
        case "all": return Frame.Kind.returnAddress.wireName
        case "none": return Frame.Kind.pc.wireName
        default: return nil
        }
    }

    /// A breadcrumb with a numeric timestamp (seconds) given as RFC 3339, like the other wires' breadcrumbs.
    private static func breadcrumb(_ crumb: JSONValue) -> JSONValue {
        guard var fields = crumb.objectValue else { return crumb }
        if let time = fields["timestamp"], time.stringValue == nil, let ms = milliseconds(time) {
            fields["timestamp"] = .string(RFC3339.format(milliseconds: ms))
        }
        return .object(fields)
    }

    /// `values` of a Sentry list (`{"values": […]}`), or the list itself.
    private static func values(_ value: JSONValue?) -> [JSONValue]? {
        value?["values"]?.arrayValue ?? value?.arrayValue
    }

    /// An object's members, or a list of `[key, value]` pairs (Sentry's other form of `tags`).
    private static func pairs(_ value: JSONValue?) -> [(String, JSONValue)] {
        if let object = value?.objectValue { return object.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
        return (value?.arrayValue ?? []).compactMap { pair in
            guard let items = pair.arrayValue, items.count == 2, let key = items[0].stringValue else { return nil }
            return (key, items[1])
        }
    }

    /// A Sentry timestamp (RFC 3339, or seconds since 1970 as a number) in unix milliseconds.
    static func milliseconds(_ value: JSONValue) -> Int64? {
        if let text = value.stringValue { return RFC3339.milliseconds(text) ?? Double(text).flatMap(seconds) }
        return value.doubleValue.flatMap(seconds)
    }

    private static func seconds(_ value: Double) -> Int64? {
        let ms = (value * 1000).rounded()
        return ms.isFinite && abs(ms) < 1e15 ? Int64(ms) : nil
    }

    /// A thread id as text (Sentry allows a number or a string).
    private static func idText(_ value: JSONValue) -> String {
        value.stringValue ?? value.intValue.map(String.init) ?? value.jsonString
    }

    /// A thread id as the number PostHog's shape holds, when it is one.
    private static func threadNumber(_ value: JSONValue) -> Int? {
        value.intValue ?? value.stringValue.flatMap { Int($0) }
    }
}
