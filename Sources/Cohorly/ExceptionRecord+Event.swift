import CohorlyCrashModel

/// The `$exception` event of a record: the one shape the Cohorly API and PostHog receive — PostHog error
/// tracking's (`cymbal`) native frames (research/posthog.md part C).
extension ExceptionRecord {
    /// The event name.
    public static let eventName = "$exception"
    /// The event property holding the breadcrumbs.
    public static let breadcrumbsProperty = "$exception_breadcrumbs"
    /// The per-frame member carrying the frame's kind (``Frame/kind``), so no server re-guesses which address is
    /// a return address (PostHog's cymbal drops members it does not know).
    public static let frameKindKey = CapturedException.frameKindKey
    /// The `stacktrace` member telling why the async walk of that thread stopped.
    public static let asyncStopKey = CapturedException.asyncStopKey

    /// A `stacktrace` object: raw frames, and why the async walk stopped when the thread has async callers.
    static func stacktraceValue(_ frames: [Frame], asyncStop: String?) -> CohorlyValue {
        var stacktrace: Properties = ["type": "raw", "frames": .array(frames.map(\.eventValue))]
        if let asyncStop { stacktrace[asyncStopKey] = .string(asyncStop) }
        return .object(stacktrace)
    }

    /// The `$exception` event: ``properties``, then `time`, `$insert_id`, `$exception_level`, `$exception_type`,
    /// `$exception_message`, `$issue_name`, `$exception_list` (type cut to 255 characters, value to 10,000, as
    /// PostHog keeps them), `$exception_threads`, `$debug_images` and `$exception_breadcrumbs`.
    public var event: PreparedEvent {
        var properties = self.properties
        if let breadcrumbs { properties[Self.breadcrumbsProperty] = Self.breadcrumbsValue(breadcrumbs) }
        properties["time"] = .int(Int(timestampMs))
        properties["$insert_id"] = .string(insertId)
        properties["$exception_level"] = .string(level)
        if let first = exceptions.first {
            properties["$exception_type"] = .string(first.type)
            properties["$exception_message"] = .string(first.value)
        }
        if let issueName { properties["$issue_name"] = .string(String(issueName.prefix(255))) }
        properties["$exception_list"] = .array(exceptions.map(\.eventValue))
        if let threads { properties["$exception_threads"] = .array(threads.map(\.eventValue)) }
        if let images { properties["$debug_images"] = .array(images.map(\.eventValue)) }
        return PreparedEvent(name: Self.eventName, properties: properties)
    }

    /// The size of the `$exception` event's JSON: what one request must have room for.
    var eventBytes: Int { EventRecord(prepared: event).json.utf8.count }

    /// `$exception_breadcrumbs`: oldest first, each in Sentry's breadcrumb shape — `timestamp` (RFC 3339, UTC,
    /// milliseconds), `type` (`default`), `level` (`info`), `category`, `message` and `data`.
    public static func breadcrumbsValue(_ breadcrumbs: [Breadcrumb]) -> CohorlyValue {
        .array(breadcrumbs.map(\.eventValue))
    }
}

extension ExceptionRecord.Frame {
    /// The frame in PostHog's native shape.
    public var eventValue: CohorlyValue {
        var frame: Properties = [
            "platform": "native", "instruction_addr": .string(instructionAddress), "in_app": .bool(inApp),
        ]
        if let imageAddress { frame["image_addr"] = .string(imageAddress) }
        if let module { frame["module"] = .string(module) }
        if resolved {
            if let function { frame["function"] = .string(function) }
            if let symbol { frame["symbol"] = .string(symbol) }
            if let filename { frame["filename"] = .string(filename) }
            if line > 0 { frame["lineno"] = .int(line) }
            if column > 0 { frame["colno"] = .int(column) }
            if let language { frame["lang"] = .string(language) }
            frame["client_resolved"] = true
        }
        if inlined { frame["inline"] = true }
        if let kind, !inlined { frame[ExceptionRecord.frameKindKey] = .string(kind) }
        return .object(frame)
    }
}

extension ExceptionRecord.Exception {
    /// The `$exception_list` entry.
    public var eventValue: CohorlyValue {
        var mechanism: Properties = [
            "type": .string(self.mechanism.type), "handled": .bool(self.mechanism.handled),
            "synthetic": .bool(self.mechanism.synthetic),
        ]
        if !self.mechanism.meta.isEmpty { mechanism["meta"] = .object(self.mechanism.meta) }
        var entry: Properties = [
            "type": .string(String(type.prefix(255))), "value": .string(String(value.prefix(10_000))),
            "mechanism": .object(mechanism),
        ]
        if let threadId { entry["thread_id"] = .int(Int(threadId)) }
        if let frames { entry["stacktrace"] = ExceptionRecord.stacktraceValue(frames, asyncStop: asyncStop) }
        return .object(entry)
    }
}

extension ExceptionRecord.Thread {
    /// The `$exception_threads` entry.
    public var eventValue: CohorlyValue {
        [
            "thread_id": .int(Int(id)), "name": .string(name), "crashed": false,
            "stacktrace": ExceptionRecord.stacktraceValue(frames, asyncStop: asyncStop),
        ]
    }
}

extension ExceptionRecord.Image {
    /// The `$debug_images` entry.
    public var eventValue: CohorlyValue {
        [
            "type": "elf", "code_file": .string(codeFile), "code_id": .string(codeId), "debug_id": .string(debugId),
            "image_addr": .string(imageAddress), "image_size": .int(imageSize), "arch": .string(arch),
        ]
    }
}

extension ExceptionRecord.Breadcrumb {
    /// The breadcrumb in Sentry's shape (also PostHog's `$exception_breadcrumbs` entries).
    public var eventValue: CohorlyValue {
        [
            "timestamp": .string(RFC3339.format(milliseconds: timestampMs)), "type": "default", "level": "info",
            "category": .string(category), "message": .string(message), "data": .object(data),
        ]
    }
}
