import CohorlyClient
import CohorlyCrashModel
import Foundation

/// A prepared exception in Sentry's event schema, native platform (docs/sentry.md "What maps to what"): rendered from
/// the record's ``CapturedException`` when it is sent, laid out as every wire lays it out
/// (``CapturedException/laidOutFrames(of:)``).
///
/// - crash: `level: fatal`, the exception with its mechanism (`signalhandler` + `synthetic` where the type is only
///   a signal's; `meta.signal {number, code, name}`) and its stack oldest first, inlined calls as frames of their
///   own; the other threads; `debug_meta.images` for the images the frames reference;
/// - handled error: `level: error`, mechanism `generic`, `handled: true`; with a throw site, the exception's stack
///   is the throw site and the catch site (``CapturedException/Thread/catchSite``) the current thread's stack;
///   `captureMessage`: a `logentry` message event with the caller's stack as its thread;
/// - hang: mechanism `AppHang` with the duration in `data`; abnormal exit: `level: fatal`, no stack;
/// - `user.id` = the distinct id, `contexts` (os, device, app, runtime), breadcrumbs (the crashing task's first, each
///   with `data.$task`, theirs with `data.$crashing_task`), scalar app properties as
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
        let uuid = UUIDText.canonical(insertId) ?? UUIDText.derived(from: insertId)
        return String(decoding: uuid.utf8.filter { $0 != UInt8(ascii: "-") }, as: UTF8.self)
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
    static func json(_ record: QueuedException, configuration: SentryConfiguration) -> [UInt8] {
        let exception = record.exception
        var stacks = Stacks(exception)
        let images =
            exception.hasStack
            ? exception.debugImages(referencedBy: stacks.subject + stacks.others.flatMap(\.frames)) : []
        var text = bytes(exception, stacks: stacks, images: images, configuration: configuration)
        // Too large: the other threads go first (the last ones first), then the oldest frames of the stack,
        // keeping both ends; what was cut is counted in `extra`.
        while text.count > maxItemBytes, !stacks.others.isEmpty {
            let drop = max(1, stacks.others.count / 2)
            stacks.others.removeLast(drop)
            stacks.threadsDropped += drop
            text = bytes(exception, stacks: stacks, images: images, configuration: configuration)
        }
        while text.count > maxItemBytes, stacks.subject.count > 2 {
            let keep = stacks.subject.count / 4
            stacks.framesDropped += stacks.subject.count - 2 * keep
            stacks.subject = Array(stacks.subject.prefix(keep)) + Array(stacks.subject.suffix(keep))
            text = bytes(exception, stacks: stacks, images: images, configuration: configuration)
        }
        return text
    }

    /// The event for `record`, whole, as the JSON tree it is sent as.
    static func value(_ record: QueuedException, configuration: SentryConfiguration) -> CohorlyValue {
        let stacks = Stacks(record.exception)
        let images =
            record.exception.hasStack
            ? record.exception.debugImages(referencedBy: stacks.subject + stacks.others.flatMap(\.frames)) : []
        let text = bytes(record.exception, stacks: stacks, images: images, configuration: configuration)
        return CohorlyValue(bytes: text) ?? .null
    }

    /// The event's compact JSON, written straight into bytes (one event per envelope: no tree is built and no
    /// object's keys are sorted). Each object's members are written in sorted order, so the text is the one
    /// `CohorlyValue.jsonString` makes of the same event (SentryEventTextTests).
    static func bytes(
        _ exception: CapturedException, stacks: Stacks, images: [CapturedException.Image],
        configuration: SentryConfiguration
    ) -> [UInt8] {
        var properties = exception.wireProperties
        for (key, count) in [
            ("$exception_threads_dropped", stacks.threadsDropped), ("$exception_frames_dropped", stacks.framesDropped),
        ] where count > 0 {
            properties[key] = .int((properties[key]?.intValue ?? 0) + count)
        }
        func string(_ key: String) -> String? { properties[key]?.stringValue }
        var tags: [String: String] = [:]
        var extra: Properties = [:]
        if let issueName = exception.description.issueName { extra["issue_name"] = .string(issueName) }
        for (key, value) in properties where !mapped.contains(key) {
            if isScalar(value), !key.hasPrefix("$"), key.utf8.count <= 200 {
                tags[key] = String((value.stringValue ?? value.jsonString).prefix(200))
            } else {
                extra[key] = value
            }
        }
        let message = exception.description.mechanism == "generic" && exception.synthetic
        var out = JSONWriter(capacity: 4096)
        out.openObject()
        if exception.hasBreadcrumbs {
            out.key("breadcrumbs")
            out.openObject()
            out.key("values")
            out.value(
                CapturedException.breadcrumbsValue(
                    exception.breadcrumbsTaskFirst, crashingTask: exception.task, inData: true))
            out.closeObject()
        }
        out.key("contexts")
        contexts(properties, into: &out)
        if !images.isEmpty {
            out.key("debug_meta")
            out.openObject()
            out.key("images")
            out.openArray()
            for image in images { out.value(exception.imageValue(image)) }
            out.closeArray()
            out.closeObject()
        }
        if let dist = string("dist") ?? configuration.dist { out.member("dist", dist) }
        out.member("environment", configuration.environment)
        out.member("event_id", eventId(exception.insertId))
        if !message {
            out.key("exception")
            out.openObject()
            out.key("values")
            out.openArray()
            exceptionValue(exception, frames: stacks.subject, into: &out)
            out.closeArray()
            out.closeObject()
        }
        if !extra.isEmpty {
            out.key("extra")
            out.value(.object(extra))
        }
        out.member("level", exception.level)
        if message {
            out.key("logentry")
            out.openObject()
            out.member("formatted", String(exception.description.value.prefix(8192)))
            out.closeObject()
        }
        out.member("platform", "native")
        if let release = string("release") ?? configuration.release { out.member("release", release) }
        out.key("sdk")
        out.openObject()
        out.member("name", SentryDestination.sdkName)
        out.member("version", AutomaticProperties.libraryVersion)
        out.closeObject()
        if let host = string("$hostname") { out.member("server_name", host) }
        if !tags.isEmpty {
            out.key("tags")
            out.openObject()
            for (key, value) in tags.sorted(by: { $0.key < $1.key }) { out.member(key, value) }
            out.closeObject()
        }
        if exception.hasStack || !stacks.others.isEmpty {
            out.key("threads")
            out.openObject()
            out.key("values")
            out.openArray()
            // A handled error's catching stack (its exception's stack is the throw site) is the current thread's
            // stack, as Sentry's SDKs send the thread that captured an exception.
            let catchSite = stacks.others.first { $0.thread.catchSite }
            if exception.hasStack {
                let thread = exception.crashedThread
                out.openObject()
                out.key("crashed")
                out.bool(!message && exception.level == "fatal")
                out.key("current")
                out.bool(true)
                out.key("id")
                out.int(Int(thread?.tid ?? 0))
                if let name = string("$exception_thread_name") { out.member("name", name) }
                if message, !stacks.subject.isEmpty {
                    out.key("stacktrace")
                    stacktrace(stacks.subject, asyncStop: thread?.async?.stop, into: &out)
                } else if let catchSite, !catchSite.frames.isEmpty {
                    out.key("stacktrace")
                    stacktrace(catchSite.frames, asyncStop: catchSite.thread.async?.stop, into: &out)
                }
                out.closeObject()
            }
            for (other, frames) in stacks.others where !other.catchSite {
                out.openObject()
                out.key("crashed")
                out.bool(false)
                out.key("current")
                out.bool(false)
                out.key("id")
                out.int(Int(other.tid ?? 0))
                if let name = other.name, !name.isEmpty { out.member("name", name) }
                // Sentry refuses an empty stack (a thread whose unwinding failed has none).
                if !frames.isEmpty {
                    out.key("stacktrace")
                    stacktrace(frames, asyncStop: other.async?.stop, into: &out)
                }
                out.closeObject()
            }
            out.closeArray()
            out.closeObject()
        }
        out.key("timestamp")
        out.double(Double(exception.timestampMs) / 1000)
        if let id = properties["distinct_id"], id != .null {
            out.key("user")
            out.openObject()
            out.member("id", id.stringValue ?? id.jsonString)
            out.closeObject()
        }
        out.closeObject()
        return out.bytes
    }

    private static func isScalar(_ value: CohorlyValue) -> Bool {
        switch value {
        case .string, .int, .double, .bool: return true
        default: return false
        }
    }

    private static func contexts(_ properties: Properties, into out: inout JSONWriter) {
        func string(_ key: String) -> String? { properties[key]?.stringValue }
        out.openObject()
        let started = properties["$app_start_ms"]?.intValue
        if string("$app_name") != nil || started != nil {
            out.key("app")
            out.openObject()
            if let name = string("$app_name") { out.member("app_name", name) }
            if let started { out.member("app_start_time", RFC3339.format(milliseconds: Int64(started))) }
            out.closeObject()
        }
        if let arch = string("$arch") {
            out.key("device")
            out.openObject()
            out.member("arch", arch)
            out.closeObject()
        }
        out.key("os")
        out.openObject()
        if let distribution = string("$os_distribution") { out.member("distribution_name", distribution) }
        if let kernel = string("$kernel_version") { out.member("kernel_version", kernel) }
        out.member("name", string("$os") ?? "Linux")
        if let version = string("$os_version") { out.member("version", version) }
        out.closeObject()
        out.key("runtime")
        out.openObject()
        out.member("name", "Swift")
        out.closeObject()
        out.closeObject()
    }

    /// The exception's members: `mechanism`, its `stacktrace`, `thread_id`, `type` and `value`.
    private static func exceptionValue(
        _ exception: CapturedException, frames: [CapturedException.LaidOutFrame], into out: inout JSONWriter
    ) {
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
        out.openObject()
        out.key("mechanism")
        out.value(.object(mechanism))
        if !frames.isEmpty {
            out.key("stacktrace")
            stacktrace(frames, asyncStop: exception.crashedThread?.async?.stop, into: &out)
        }
        if exception.hasStack {
            out.key("thread_id")
            out.int(Int(exception.crashedThread?.tid ?? 0))
        }
        out.member("type", String(description.type.prefix(255)))
        out.member("value", String(description.value.prefix(8192)))
        out.closeObject()
    }
}
