import Foundation

/// A prepared exception in Sentry's event schema, native platform (research/sentry.md "Event"): rendered from
/// the typed ``ExceptionRecord`` when it is sent.
///
/// - crash: `level: fatal`, the exception with its mechanism (`signalhandler` + `synthetic` where the type is only
///   a signal's; `meta.signal {number, code, name}`) and its stack oldest first, inlined calls as frames of their
///   own; the other threads; `debug_meta.images` for the images the frames reference;
/// - handled error: `level: error`, mechanism `generic`, `handled: true`; `captureMessage`: a `logentry` message
///   event with the caller's stack as its thread;
/// - hang: mechanism `AppHang` with the duration in `data`; abnormal exit: `level: fatal`, no stack;
/// - `user.id` = the distinct id, `contexts` (os, device, app, runtime), breadcrumbs, scalar app properties as
///   `tags`, the rest and the `$exception_*` facts as `extra`.
enum SentryEvent {
    /// Sentry's limit for one event item; what is sent stays below it.
    static let maxItemBytes = 1_000_000

    /// Properties that become fields of their own (not tags or extra).
    static let mapped: Set<String> = [
        "distinct_id", "time", "$insert_id", "release", "dist", "$os", "$os_version", "$os_distribution",
        "$kernel_version", "$arch", "$lib", "$lib_version", "$app_name", "$app_start_ms", "$hostname",
        "$exception_thread_name", SentrySessions.property, ExceptionRecord.breadcrumbsProperty,
    ]

    /// The event's id: the record's `$insert_id` as 32 hex digits (so a resend is deduplicated by the server).
    static func eventId(_ insertId: String) -> String {
        (UUIDText.canonical(insertId) ?? UUIDText.derived(from: insertId)).replacingOccurrences(of: "-", with: "")
    }

    /// The event JSON for `record`, trimmed to ``maxItemBytes``.
    static func json(_ record: ExceptionRecord, configuration: SentryConfiguration) -> String {
        var record = record
        var text = value(record, configuration: configuration).jsonString
        // Too large: the other threads go first (the last ones first), then the oldest frames of the stack,
        // keeping both ends; what was cut is counted in `extra`.
        var threadsDropped = 0
        while text.utf8.count > maxItemBytes, let threads = record.threads, !threads.isEmpty {
            record.threads = Array(threads.dropLast(max(1, threads.count / 2)))
            threadsDropped += threads.count - (record.threads?.count ?? 0)
            record.properties["$exception_threads_dropped"] = .int(threadsDropped)
            text = value(record, configuration: configuration).jsonString
        }
        while text.utf8.count > maxItemBytes, let frames = record.exceptions.first?.frames, frames.count > 2 {
            let keep = frames.count / 4
            record.exceptions[0].frames = Array(frames.prefix(keep)) + Array(frames.suffix(keep))
            let dropped = (record.properties["$exception_frames_dropped"]?.intValue ?? 0) + frames.count - 2 * keep
            record.properties["$exception_frames_dropped"] = .int(dropped)
            text = value(record, configuration: configuration).jsonString
        }
        return text
    }

    static func value(_ record: ExceptionRecord, configuration: SentryConfiguration) -> CohorlyValue {
        let properties = record.properties
        func string(_ key: String) -> String? { properties[key]?.stringValue }
        var event: Properties = [
            "event_id": .string(eventId(record.insertId)), "timestamp": .double(Double(record.timestampMs) / 1000),
            "platform": "native", "level": .string(record.level), "environment": .string(configuration.environment),
            "sdk": [
                "name": .string(SentryDestination.sdkName), "version": .string(AutomaticProperties.libraryVersion),
            ],
        ]
        if let release = string("release") ?? configuration.release { event["release"] = .string(release) }
        if let dist = string("dist") ?? configuration.dist { event["dist"] = .string(dist) }
        if let id = properties["distinct_id"], id != .null {
            event["user"] = ["id": .string(id.stringValue ?? id.jsonString)]
        }
        if let host = string("$hostname") { event["server_name"] = .string(host) }
        event["contexts"] = contexts(properties)
        let exception = record.exceptions.first
        let message = exception.map { $0.mechanism.type == "generic" && $0.mechanism.synthetic } ?? false
        if message, let exception {
            event["logentry"] = ["formatted": .string(String(exception.value.prefix(8192)))]
        } else {
            event["exception"] = ["values": .array(record.exceptions.map(exceptionValue))]
        }
        var threads: [CohorlyValue] = []
        if let exception, let id = exception.threadId {
            var thread: Properties = [
                "id": .int(Int(id)), "crashed": .bool(!message && record.level == "fatal"), "current": true,
            ]
            if let name = string("$exception_thread_name") { thread["name"] = .string(name) }
            if message, let frames = exception.frames, !frames.isEmpty { thread["stacktrace"] = stacktrace(frames) }
            threads.append(.object(thread))
        }
        for other in record.threads ?? [] {
            var thread: Properties = ["id": .int(Int(other.id)), "crashed": false, "current": false]
            // Sentry refuses an empty stack (a thread whose unwinding failed has none).
            if !other.frames.isEmpty { thread["stacktrace"] = stacktrace(other.frames) }
            if !other.name.isEmpty { thread["name"] = .string(other.name) }
            threads.append(.object(thread))
        }
        if !threads.isEmpty { event["threads"] = ["values": .array(threads)] }
        if let images = record.images, !images.isEmpty { event["debug_meta"] = ["images": .array(images.map(image))] }
        if let breadcrumbs = record.breadcrumbs, !breadcrumbs.isEmpty {
            event["breadcrumbs"] = ["values": .array(breadcrumbs.map(\.eventValue))]
        }
        var tags: Properties = [:]
        var extra: Properties = [:]
        if let issueName = record.issueName { extra["issue_name"] = .string(issueName) }
        for (key, value) in properties where !mapped.contains(key) {
            if isScalar(value), !key.hasPrefix("$"), key.utf8.count <= 200 {
                tags[key] = .string(String((value.stringValue ?? value.jsonString).prefix(200)))
            } else {
                extra[key] = value
            }
        }
        if !tags.isEmpty { event["tags"] = .object(tags) }
        if !extra.isEmpty { event["extra"] = .object(extra) }
        return .object(event)
    }

    private static func isScalar(_ value: CohorlyValue) -> Bool {
        switch value {
        case .string, .int, .double, .bool: return true
        default: return false
        }
    }

    private static func contexts(_ properties: Properties) -> CohorlyValue {
        func string(_ key: String) -> CohorlyValue? { properties[key]?.stringValue.map { .string($0) } }
        var os: Properties = ["name": string("$os") ?? "Linux"]
        os["version"] = string("$os_version")
        os["kernel_version"] = string("$kernel_version")
        os["distribution_name"] = string("$os_distribution")
        var contexts: Properties = ["os": .object(os), "runtime": ["name": "Swift"]]
        if let arch = string("$arch") { contexts["device"] = ["arch": arch] }
        var app: Properties = [:]
        app["app_name"] = string("$app_name")
        if let started = properties["$app_start_ms"]?.intValue {
            app["app_start_time"] = .string(RFC3339.format(milliseconds: Int64(started)))
        }
        if !app.isEmpty { contexts["app"] = .object(app) }
        return .object(contexts)
    }

    private static func exceptionValue(_ exception: ExceptionRecord.Exception) -> CohorlyValue {
        let source = exception.mechanism
        var mechanism: Properties = ["handled": .bool(source.handled)]
        var data: Properties = [:]
        switch source.type {
        case "signal":
            mechanism["type"] = "signalhandler"
            mechanism["synthetic"] = true
        case "hang":
            mechanism["type"] = "AppHang"
            if case .object(let hang)? = source.meta["hang"] { data = hang }
        default:
            mechanism["type"] = .string(source.type)
            if source.synthetic { mechanism["synthetic"] = true }
        }
        if case .object(let signal)? = source.meta["signal"] {
            var meta: Properties = [:]
            for key in ["number", "code"] { if let number = signal[key]?.intValue { meta[key] = .int(number) } }
            if let name = signal["name"]?.stringValue { meta["name"] = .string(name) }
            if let address = signal["address"]?.stringValue { data["fault_address"] = .string(address) }
            mechanism["meta"] = ["signal": .object(meta)]
        }
        if !data.isEmpty { mechanism["data"] = .object(data) }
        var value: Properties = [
            "type": .string(String(exception.type.prefix(255))), "value": .string(String(exception.value.prefix(8192))),
            "mechanism": .object(mechanism),
        ]
        if let threadId = exception.threadId { value["thread_id"] = .int(Int(threadId)) }
        if let frames = exception.frames, !frames.isEmpty { value["stacktrace"] = stacktrace(frames) }
        return .object(value)
    }

    private static func stacktrace(_ frames: [ExceptionRecord.Frame]) -> CohorlyValue {
        ["frames": .array(frames.map(frame))]
    }

    private static func frame(_ frame: ExceptionRecord.Frame) -> CohorlyValue {
        var value: Properties = ["instruction_addr": .string(frame.instructionAddress), "in_app": .bool(frame.inApp)]
        if let imageAddress = frame.imageAddress { value["image_addr"] = .string(imageAddress) }
        if let package = frame.imagePath { value["package"] = .string(package) }
        if frame.resolved {
            if let function = frame.function { value["function"] = .string(function) }
            if let filename = frame.filename {
                value["filename"] = .string(filename)
                if filename.hasPrefix("/") { value["abs_path"] = .string(filename) }
            }
            if frame.line > 0 { value["lineno"] = .int(frame.line) }
            if frame.column > 0 { value["colno"] = .int(frame.column) }
        }
        return .object(value)
    }

    private static func image(_ image: ExceptionRecord.Image) -> CohorlyValue {
        [
            "type": "elf", "code_file": .string(image.codeFile), "code_id": .string(image.codeId),
            "debug_id": .string(image.debugId), "image_addr": .string(image.imageAddress),
            "image_size": .int(image.imageSize), "arch": .string(image.arch),
        ]
    }
}
