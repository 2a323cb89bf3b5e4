import CohorlyCrashModel
import Foundation

/// A prepared exception in Sentry's event schema, native platform (research/sentry.md "Event"): rendered from
/// the record's ``CapturedException`` when it is sent, laid out as every wire lays it out
/// (``CapturedException/laidOutFrames(of:)``).
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
        "$exception_thread_name", SentrySessions.property, CapturedException.breadcrumbsProperty,
    ]

    /// The event's id: the record's `$insert_id` as 32 hex digits (so a resend is deduplicated by the server).
    static func eventId(_ insertId: String) -> String {
        (UUIDText.canonical(insertId) ?? UUIDText.derived(from: insertId)).replacingOccurrences(of: "-", with: "")
    }

    /// What the size trimming works on: the exception's stack and the other threads' stacks, oldest first.
    struct Stacks {
        var subject: [CapturedException.LaidOutFrame]
        var others: [(thread: CapturedException.Thread, frames: [CapturedException.LaidOutFrame])]
        var threadsDropped = 0
        var framesDropped = 0

        init(_ exception: CapturedException) {
            subject = exception.hasStack ? exception.crashedThread.map(exception.laidOutFrames(of:)) ?? [] : []
            others =
                exception.hasStack ? exception.otherThreads.map { ($0, exception.laidOutFrames(of: $0)) } : []
        }
    }

    /// The event JSON for `record`, trimmed to ``maxItemBytes``.
    static func json(_ record: ExceptionRecord, configuration: SentryConfiguration) -> String {
        let exception = record.exception
        var stacks = Stacks(exception)
        let images =
            exception.hasStack
            ? exception.debugImages(referencedBy: stacks.subject + stacks.others.flatMap(\.frames)) : []
        var text = value(exception, stacks: stacks, images: images, configuration: configuration).jsonString
        // Too large: the other threads go first (the last ones first), then the oldest frames of the stack,
        // keeping both ends; what was cut is counted in `extra`.
        while text.utf8.count > maxItemBytes, !stacks.others.isEmpty {
            let drop = max(1, stacks.others.count / 2)
            stacks.others.removeLast(drop)
            stacks.threadsDropped += drop
            text = value(exception, stacks: stacks, images: images, configuration: configuration).jsonString
        }
        while text.utf8.count > maxItemBytes, stacks.subject.count > 2 {
            let keep = stacks.subject.count / 4
            stacks.framesDropped += stacks.subject.count - 2 * keep
            stacks.subject = Array(stacks.subject.prefix(keep)) + Array(stacks.subject.suffix(keep))
            text = value(exception, stacks: stacks, images: images, configuration: configuration).jsonString
        }
        return text
    }

    /// The event for `record`, whole.
    static func value(_ record: ExceptionRecord, configuration: SentryConfiguration) -> CohorlyValue {
        let stacks = Stacks(record.exception)
        let images =
            record.exception.hasStack
            ? record.exception.debugImages(referencedBy: stacks.subject + stacks.others.flatMap(\.frames)) : []
        return value(record.exception, stacks: stacks, images: images, configuration: configuration)
    }

    static func value(
        _ exception: CapturedException, stacks: Stacks, images: [CapturedException.Image],
        configuration: SentryConfiguration
    ) -> CohorlyValue {
        var properties = exception.wireProperties
        for (key, count) in [
            ("$exception_threads_dropped", stacks.threadsDropped), ("$exception_frames_dropped", stacks.framesDropped),
        ] where count > 0 {
            properties[key] = .int((properties[key]?.intValue ?? 0) + count)
        }
        func string(_ key: String) -> String? { properties[key]?.stringValue }
        var event: Properties = [
            "event_id": .string(eventId(exception.insertId)),
            "timestamp": .double(Double(exception.timestampMs) / 1000), "platform": "native",
            "level": .string(exception.level), "environment": .string(configuration.environment),
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
        let message = exception.description.mechanism == "generic" && exception.synthetic
        if message {
            event["logentry"] = ["formatted": .string(String(exception.description.value.prefix(8192)))]
        } else {
            event["exception"] = ["values": [exceptionValue(exception, frames: stacks.subject)]]
        }
        var threads: [CohorlyValue] = []
        if exception.hasStack {
            var thread: Properties = [
                "id": .int(Int(exception.crashedThread?.tid ?? 0)),
                "crashed": .bool(!message && exception.level == "fatal"), "current": true,
            ]
            if let name = string("$exception_thread_name") { thread["name"] = .string(name) }
            if message, !stacks.subject.isEmpty {
                thread["stacktrace"] = stacktrace(stacks.subject, asyncStop: exception.crashedThread?.async?.stop)
            }
            threads.append(.object(thread))
        }
        for (other, frames) in stacks.others {
            var thread: Properties = ["id": .int(Int(other.tid ?? 0)), "crashed": false, "current": false]
            // Sentry refuses an empty stack (a thread whose unwinding failed has none).
            if !frames.isEmpty { thread["stacktrace"] = stacktrace(frames, asyncStop: other.async?.stop) }
            if let name = other.name, !name.isEmpty { thread["name"] = .string(name) }
            threads.append(.object(thread))
        }
        if !threads.isEmpty { event["threads"] = ["values": .array(threads)] }
        if !images.isEmpty { event["debug_meta"] = ["images": .array(images.map { exception.imageValue($0) })] }
        if exception.hasBreadcrumbs {
            event["breadcrumbs"] = ["values": CapturedException.breadcrumbsValue(exception.breadcrumbs)]
        }
        var tags: Properties = [:]
        var extra: Properties = [:]
        if let issueName = exception.description.issueName { extra["issue_name"] = .string(issueName) }
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

    private static func exceptionValue(_ exception: CapturedException, frames: [CapturedException.LaidOutFrame])
        -> CohorlyValue
    {
        let description = exception.description
        var mechanism: Properties = ["handled": .bool(exception.handled)]
        var data: Properties = [:]
        switch description.mechanism {
        case "signal":
            mechanism["type"] = "signalhandler"
            mechanism["synthetic"] = true
        case "hang":
            mechanism["type"] = "AppHang"
            if case .object(let hang)? = exception.mechanismMeta["hang"] { data = hang }
        default:
            mechanism["type"] = .string(description.mechanism)
            if exception.synthetic { mechanism["synthetic"] = true }
        }
        if case .object(let signal)? = exception.mechanismMeta["signal"] {
            var meta: Properties = [:]
            for key in ["number", "code"] { if let number = signal[key]?.intValue { meta[key] = .int(number) } }
            if let name = signal["name"]?.stringValue { meta["name"] = .string(name) }
            if let address = signal["address"]?.stringValue { data["fault_address"] = .string(address) }
            mechanism["meta"] = ["signal": .object(meta)]
        }
        if !data.isEmpty { mechanism["data"] = .object(data) }
        var value: Properties = [
            "type": .string(String(description.type.prefix(255))),
            "value": .string(String(description.value.prefix(8192))), "mechanism": .object(mechanism),
        ]
        if exception.hasStack { value["thread_id"] = .int(Int(exception.crashedThread?.tid ?? 0)) }
        if !frames.isEmpty {
            value["stacktrace"] = stacktrace(frames, asyncStop: exception.crashedThread?.async?.stop)
        }
        return .object(value)
    }

    /// A stacktrace: the frames oldest first, the adjustment their kinds call for (``adjustment(for:)``), and
    /// why the async walk stopped when the stack has async callers.
    private static func stacktrace(_ frames: [CapturedException.LaidOutFrame], asyncStop: AsyncChain.Stop?)
        -> CohorlyValue
    {
        let adjustment = adjustment(for: frames)
        let root = asyncRootIndex(frames)
        var stacktrace: Properties = [
            "frames": .array(frames.enumerated().map { frame($1, adjustment, stackStart: $0 == root) }),
            "instruction_addr_adjustment": .string(adjustment.rawValue),
        ]
        if let asyncStop, root != nil { stacktrace[CapturedException.asyncStopKey] = .string(asyncStop.rawValue) }
        return .object(stacktrace)
    }

    private static func frame(
        _ frame: CapturedException.LaidOutFrame, _ adjustment: AddressAdjustment, stackStart: Bool
    ) -> CohorlyValue {
        var value: Properties = [
            "instruction_addr": .string(sentAddress(frame, adjustment).description),
            "in_app": .bool(frame.stackFrame.inApp),
        ]
        if let image = frame.image {
            value["image_addr"] = .string(Address(image.base).description)
            value["package"] = .string(image.path)
        }
        if frame.resolved, let symbol = frame.symbol {
            if let function = symbol.function { value["function"] = .string(function) }
            if let mangled = frame.swiftMangledName { value["symbol"] = .string(mangled) }
            if frame.hasSourceLocation, let filename = symbol.file {
                value["filename"] = .string(filename)
                if filename.hasPrefix("/") { value["abs_path"] = .string(filename) }
                value["lineno"] = .int(symbol.line)
                if symbol.column > 0 { value["colno"] = .int(symbol.column) }
            }
        }
        if let kind = frame.kind { value[CapturedException.frameKindKey] = .string(kind.wireName) }
        if stackStart { value["stack_start"] = true }
        return .object(value)
    }
}
