/// The `$exception` event of an exception: the one shape the Cohorly API and PostHog receive — PostHog error
/// tracking's (`cymbal`) native frames (docs/posthog.md "What goes on the wire") — written here beside its one reader
/// (``init(exceptionEvent:)``).
extension CapturedException {
    /// The event name.
    public static let eventName = "$exception"
    /// The event property holding the breadcrumbs.
    public static let breadcrumbsProperty = "$exception_breadcrumbs"
    /// The event property holding the exceptions (the one raised first), each with its type, value, mechanism
    /// and the stack trace of its thread: what makes an event a crash. The one spelling of the key in the
    /// package: every reader and writer of the event names it by this constant.
    public static let exceptionListProperty = "$exception_list"
    /// The event property holding the other threads (the subject thread's stack is the first exception's).
    public static let threadsProperty = "$exception_threads"
    /// The event property holding the level (`fatal`, `error`…).
    public static let levelProperty = "$exception_level"
    /// The event property holding the subject thread's name.
    public static let threadNameProperty = "$exception_thread_name"

    /// ``properties`` with the facts every wire carries as properties: `$exception_executable`,
    /// `$exception_report_complete` (false for a salvaged report), `$exception_thread_name` and
    /// `$exception_breadcrumbs_dropped`.
    public var wireProperties: Properties {
        var properties = self.properties
        if let executable { properties["$exception_executable"] = .string(executable) }
        if !complete { properties["$exception_report_complete"] = false }
        if hasStack, let name = crashedThread?.name, !name.isEmpty {
            properties[Self.threadNameProperty] = .string(name)
        }
        if hasBreadcrumbs, breadcrumbsDropped > 0 {
            properties["$exception_breadcrumbs_dropped"] = .int(breadcrumbsDropped)
        }
        return properties
    }

    /// Whether the breadcrumbs are sent: some were recorded and the app did not set the property itself.
    public var hasBreadcrumbs: Bool { !breadcrumbs.isEmpty && properties[Self.breadcrumbsProperty] == nil }

    /// The `$exception` event's properties: ``wireProperties``, then `$exception_breadcrumbs`, `time`,
    /// `$insert_id`, `$exception_level`, `$exception_type`, `$exception_message`, `$issue_name` (255
    /// characters), ``exceptionListProperty`` (type cut to 255 characters, value to 10,000, as PostHog keeps them), and,
    /// with a stack, `$exception_threads` (when there are other threads, or some were dropped) and
    /// `$debug_images` (the images the frames reference that have a build id: PostHog rejects an image without
    /// a `debug_id`).
    public var eventProperties: Properties {
        var properties = wireProperties
        if hasBreadcrumbs {
            var crumbs = Self.breadcrumbsValue(breadcrumbsTaskFirst, crashingTask: task)
            if let differences = breadcrumbDifferences, let list = crumbs.arrayValue, list.count == differences.count {
                crumbs = .array(zip(list, differences).map { .object($1.applied(to: $0.objectValue ?? [:])) })
            }
            properties[Self.breadcrumbsProperty] = crumbs
        }
        properties["time"] = .int(Int(clamping: timestampMs))
        properties["$insert_id"] = .string(insertId)
        properties[Self.levelProperty] = .string(level)
        properties["$exception_type"] = .string(description.type)
        properties["$exception_message"] = .string(description.value)
        if let issueName = description.issueName { properties["$issue_name"] = .string(String(issueName.prefix(255))) }
        var entry: Properties = [
            "type": .string(String(description.type.prefix(255))),
            "value": .string(String(description.value.prefix(10_000))), "mechanism": mechanismValue,
        ]
        guard hasStack else {
            properties[Self.exceptionListProperty] = sentExceptionList ?? [.object(entry)]
            return properties
        }
        let subject = crashedThread
        let subjectFrames = subject.map(laidOutFrames(of:)) ?? []
        entry["thread_id"] = .int(Int(subject?.tid ?? 0))
        entry["stacktrace"] = Self.stacktraceValue(subjectFrames, asyncStop: subject?.async?.stop)
        properties[Self.exceptionListProperty] = sentExceptionList ?? [.object(entry)]
        let others = otherThreads
        let otherFrames = others.map(laidOutFrames(of:))
        if let listedThreads {
            properties[Self.threadsProperty] = .array(listedThreads.map(\.value))
        } else if !others.isEmpty || properties["$exception_threads_dropped"] != nil {
            properties[Self.threadsProperty] = .array(
                zip(others, otherFrames).map { thread, frames in Self.threadValue(thread, frames: frames) })
        }
        let images = debugImages(referencedBy: subjectFrames + otherFrames.flatMap { $0 })
        properties["$debug_images"] = .array(images.map { imageValue($0) })
        return properties
    }

    /// The `mechanism` of the exception list's entry.
    var mechanismValue: CohorlyValue {
        var mechanism: Properties = [
            "type": .string(description.mechanism), "handled": .bool(handled), "synthetic": .bool(synthetic),
        ]
        if !mechanismMeta.isEmpty { mechanism["meta"] = .object(mechanismMeta) }
        return .object(mechanism)
    }

    /// A `stacktrace` object: raw frames, and why the async walk stopped when the thread has async callers.
    static func stacktraceValue(_ frames: [LaidOutFrame], asyncStop: AsyncChain.Stop?) -> CohorlyValue {
        var stacktrace: Properties = ["type": "raw", "frames": .array(frames.map(frameValue))]
        if let asyncStop { stacktrace[asyncStopKey] = .string(asyncStop.rawValue) }
        return .object(stacktrace)
    }

    /// A `$exception_threads` entry.
    /// `catch_site: true` marks a handled error's catching stack (its exception stack is the throw site).
    static func threadValue(_ thread: Thread, frames: [LaidOutFrame]) -> CohorlyValue {
        var value: Properties = [
            "thread_id": .int(Int(thread.tid ?? 0)), "name": .string(thread.name ?? ""), "crashed": false,
            "stacktrace": stacktraceValue(frames, asyncStop: thread.async?.stop),
        ]
        if thread.catchSite { value["catch_site"] = true }
        return .object(value)
    }

    /// The frame member holding the full demangled name where `function` is the short one (Sentry's name for it;
    /// PostHog's cymbal drops members it does not know).
    public static let rawFunctionKey = "raw_function"

    /// A frame in PostHog's native shape: `module` is the image's file name; what the device resolved is sent
    /// with `client_resolved` (`function` short as the stack text prints it, ``FrameSymbol/shortFunction``, the
    /// full name as ``rawFunctionKey`` and the mangled Swift name as `symbol`, Sentry's names for them: PostHog
    /// drops unknown members; a file only where the line table placed the address); the kind under
    /// ``frameKindKey`` on every frame but an inlined call.
    static func frameValue(_ frame: LaidOutFrame) -> CohorlyValue {
        var value: Properties = [
            "platform": "native", "instruction_addr": .string(frame.stackFrame.frame.address.description),
            "in_app": .bool(frame.stackFrame.inApp),
        ]
        if let image = frame.image {
            value["image_addr"] = .string(Address(image.base).description)
            value["module"] = .string(image.fileName)
        }
        if frame.resolved, let symbol = frame.symbol {
            if let function = symbol.function {
                // The short name as the stack text shows it; the full one beside it (cymbal drops the member).
                let short = symbol.shortFunction ?? function
                value["function"] = .string(short)
                if short != function { value[rawFunctionKey] = .string(function) }
            }
            if let mangled = frame.swiftMangledName { value["symbol"] = .string(mangled) }
            if frame.hasSourceLocation, let file = symbol.file {
                value["filename"] = .string(file)
                value["lineno"] = .int(symbol.line)
                if symbol.column > 0 { value["colno"] = .int(symbol.column) }
            }
            if let language = frame.language { value["lang"] = .string(language) }
            value["client_resolved"] = true
        }
        if frame.inlined { value["inline"] = true }
        if let kind = frame.kind { value[frameKindKey] = .string(kind.wireName) }
        return .object(value)
    }

    /// A `$debug_images` entry (also Sentry's `debug_meta.images` entry).
    public func imageValue(_ image: Image) -> CohorlyValue {
        [
            "type": "elf", "code_file": .string(image.path), "code_id": .string(image.buildId),
            "debug_id": .string(image.debugId), "image_addr": .string(Address(image.base).description),
            "image_size": .int(Int(clamping: image.size)), "arch": .string(debugImageArch),
        ]
    }

    /// `$exception_breadcrumbs`: in the order given, each in Sentry's breadcrumb shape — `timestamp` (RFC 3339,
    /// UTC, milliseconds), `type` (``Breadcrumb/type``, else `default`), `level` (``Breadcrumb/level``, else
    /// `info`), `category`, `message` and `data` — plus `task`
    /// (the Swift task that added it) and, on those of `crashingTask`, `crashing_task: true`; with `inData` (Sentry,
    /// which shows only its own members) those two go into `data` as `$task` and `$crashing_task`.
    public static func breadcrumbsValue(_ breadcrumbs: [Breadcrumb], crashingTask: UInt64? = nil, inData: Bool = false)
        -> CohorlyValue
    {
        .array(breadcrumbs.map { breadcrumbValue($0, crashingTask: crashingTask, inData: inData) })
    }

    /// One breadcrumb in Sentry's shape (also PostHog's `$exception_breadcrumbs` entries); see
    /// ``breadcrumbsValue(_:crashingTask:inData:)``.
    public static func breadcrumbValue(_ crumb: Breadcrumb, crashingTask: UInt64? = nil, inData: Bool = false)
        -> CohorlyValue
    {
        var value: Properties = [
            "timestamp": .string(RFC3339.format(milliseconds: Int64(clamping: crumb.timestampMs))),
            "type": .string(crumb.type ?? "default"), "level": .string(crumb.level ?? "info"),
            "category": .string(crumb.category), "message": .string(crumb.message),
        ]
        var data = crumb.data
        if let task = crumb.task {
            let crashing = task == crashingTask
            if inData {
                data["$task"] = .int(Int(clamping: task))
                if crashing { data["$crashing_task"] = true }
            } else {
                value["task"] = .int(Int(clamping: task))
                if crashing { value["crashing_task"] = true }
            }
        }
        value["data"] = .object(data)
        return .object(value)
    }
}

extension CapturedException.Image {
    /// The image's file name (PostHog's `module`).
    public var fileName: String {
        path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
    }
}
