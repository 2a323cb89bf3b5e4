import CohorlyCollectorCore
import CohorlyCrashModel
import Foundation

/// A Sentry event item (docs/sentry.md "Local collector") decoded straight into the crash model where it arrives:
/// an event with an exception becomes a `CapturedException` — its exceptions and other threads as the model's
/// listed entries, each stack frame for frame as the model's frames — with the event's identity and its other
/// properties, and is stored as the other wires' crashes are (`cohorly crashes list/show` and `GET /api/crashes`
/// show it like the others and symbolicate its raw frames against the uploaded debug files); the properties
/// `GET /api/events` shows are the model's `$exception` rendering. Its `$insert_id` is the event id as a dashed
/// lowercase UUID: the Sentry destination sends the crash's `$insert_id` as the event id, so a crash that arrives
/// over two wires with the same project token (the DSN's key) is stored once.
///
/// What maps to what: `level` → `$exception_level`; `exception.values` (oldest first) → the listed exceptions,
/// the last (the one raised) first, each with its `mechanism`, `module` and `thread_id` as sent; `stacktrace.frames`
/// (oldest first, also taken from the crashed thread when the exception has none) keep their fields, `package`
/// becoming `module`, and a frame marked `inline: true`, or repeating the previous frame's address under another
/// function name, is an inlined call of that frame; the other `threads.values` → the listed threads
/// (`$exception_threads`); `debug_meta.images` → the model's images; `breadcrumbs` → `$exception_breadcrumbs`;
/// `user.id` → distinct id; `release`, `dist`, `environment`, `contexts.os` / `device.arch` and `sdk` → the
/// properties the other wires use; `tags` and `extra` → properties of their own names (the client's super
/// properties), never over a mapped one. An event without an exception (a message) is stored as `$message`.
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
        let exceptions = values(event["exception"]) ?? []
        guard !exceptions.isEmpty else {
            properties["$level"] = .string(level)
            properties["$message"] =
                event["logentry"]?["formatted"] ?? event["logentry"]?["message"] ?? event["message"]?["formatted"]
                ?? event["message"]
            addContext(event, to: &properties, reserving: [])
            let parsed = JSONValue.object(properties.filter { $0.value != .null })
            return CollectorStore.NewEvent(
                token: token, event: "$message", distinctId: distinctId, time: time, insertId: eventId,
                propertiesJSON: parsed.jsonString, properties: parsed, crash: nil,
                fingerprint: parsed[CollectorStore.NewEvent.fingerprintProperty])
        }
        properties[CapturedException.levelProperty] = .string(level)
        let threads = values(event["threads"]) ?? []
        let crashed = crashedThread(of: exceptions, in: threads)
        properties[CapturedException.threadNameProperty] = crashed?["name"]
        properties[CollectorStore.NewEvent.fingerprintProperty] = fingerprint(event["fingerprint"])
        if let crumbs = values(event["breadcrumbs"]) {
            properties[CapturedException.breadcrumbsProperty] = .array(crumbs.map(breadcrumb))
        }
        addContext(
            event, to: &properties,
            reserving: [CapturedException.exceptionListProperty, CapturedException.threadsProperty, "$debug_images"])
        properties = properties.filter { $0.value != .null }
        let crash = CapturedException(
            listedExceptions: listedExceptions(exceptions, crashed: crashed),
            listedThreads: listedThreads(threads, crashed: crashed),
            images: event["debug_meta"]?["images"]?.arrayValue ?? [], properties: properties)
        // What the API shows of it: the model's rendering.
        let shown = JSONValue.object(crash.eventProperties)
        return CollectorStore.NewEvent(
            token: token, event: CapturedException.eventName, distinctId: distinctId, time: time, insertId: eventId,
            propertiesJSON: shown.jsonString, properties: shown, crash: crash,
            fingerprint: properties[CollectorStore.NewEvent.fingerprintProperty])
    }

    /// `tags` and `extra` as properties of their own names, never over a mapped one or one of `reserved`.
    private static func addContext(
        _ event: [String: JSONValue], to properties: inout [String: JSONValue], reserving reserved: Set<String>
    ) {
        for source in [event["extra"], event["tags"]] {
            for (key, value) in pairs(source) where properties[key] == nil && !reserved.contains(key) {
                properties[key] = value
            }
        }
    }

    /// The thread the exception raised was on: the one its `thread_id` names, else the one marked crashed.
    private static func crashedThread(of exceptions: [JSONValue], in threads: [JSONValue]) -> JSONValue? {
        let threadId = exceptions.last?["thread_id"]
        return threads.first { thread in
            threadId.map { thread["id"].map(idText) == idText($0) } ?? (thread["crashed"] == .bool(true))
        }
    }

    /// The exceptions as the model's listed entries, the one raised first, each with its own stack (the raised
    /// one's from the crashed thread when it has none) and thread.
    private static func listedExceptions(_ exceptions: [JSONValue], crashed: JSONValue?)
        -> [CapturedException.ListedException]
    {
        exceptions.reversed().enumerated().map { index, exception in
            let mechanism = present(exception["mechanism"])
            var entry = CapturedException.ListedException(
                type: present(exception["type"]), value: present(exception["value"]),
                mechanismType: mechanism?["type"])
            entry.mechanism = mechanism
            entry.module = present(exception["module"])
            entry.threadId = (exception["thread_id"] ?? (index == 0 ? crashed?["id"] : nil)).flatMap(threadNumber)
                .map(JSONValue.int)
            let stacktrace = exception["stacktrace"] ?? (index == 0 ? crashed?["stacktrace"] : nil)
            entry.stack = stacktrace.map(listedStack)
            entry.sent = CapturedException.SentDifference()
            return entry
        }
    }

    /// The threads but the crashed one as the model's listed entries (nil: none).
    private static func listedThreads(_ threads: [JSONValue], crashed: JSONValue?)
        -> [CapturedException.ListedThread]?
    {
        let others = threads.filter { thread in
            guard let crashed else { return thread["crashed"] != .bool(true) }
            return thread["id"].map(idText) != crashed["id"].map(idText)
        }
        guard !others.isEmpty else { return nil }
        return others.map { thread in
            CapturedException.ListedThread(
                threadId: thread["id"].flatMap(threadNumber).map(JSONValue.int), name: present(thread["name"]),
                stack: thread["stacktrace"].map(listedStack),
                sent: CapturedException.SentDifference(kept: ["crashed": false]))
        }
    }

    /// A Sentry stacktrace as the model's listed stack: its frames (``frames(_:)``) and `type: raw`.
    private static func listedStack(_ stacktrace: JSONValue) -> CapturedException.ListedStack {
        var kept: [String: JSONValue] = ["type": "raw"]
        if let stop = stacktrace[CapturedException.asyncStopKey] { kept[CapturedException.asyncStopKey] = stop }
        return CapturedException.ListedStack(
            frames: frames(stacktrace).map(CapturedException.ListedFrame.init(sent:)),
            sent: CapturedException.SentDifference(kept: kept))
    }

    /// A member as sent, nil when absent or `null`.
    private static func present(_ value: JSONValue?) -> JSONValue? { value == .null ? nil : value }

    /// A Sentry stacktrace's frames as the model's frames read them: same frames and order, `package` as `module`,
    /// addresses as `0x…` strings, inlined frames marked `inline: true`, and every other frame's kind under
    /// `CapturedException.frameKindKey`: the one it was sent with, else what the stacktrace's
    /// `instruction_addr_adjustment` says (`all_but_first`: the innermost frame exact, the others return
    /// addresses; `all`: return addresses; `none`: exact; otherwise none, and the reader's positional rule
    /// applies). With `none`, a return address arrives already stepped back into its call: it is stored as the
    /// return address again (one byte on, with its inlined calls), as the other wires store it.
    static func frames(_ stacktrace: JSONValue) -> [JSONValue] {
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
        return frames.map(JSONValue.object)
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
