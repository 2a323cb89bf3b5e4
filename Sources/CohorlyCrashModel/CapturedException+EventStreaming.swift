/// `$exception` events read straight from their bytes (a ``JSONReader`` walk): each frame is reduced to the
/// members the crash uses as it is read, so no JSON tree of the frames is built (a tree took ~6× a report's size).
/// The crash is the one ``CapturedException/init(exceptionEvent:)`` reads from the parsed event (the `crashinput`
/// fuzz target checks it).
extension CapturedException {
    /// An `$exception` event read from its JSON, with what names it.
    package struct ReadEvent: Sendable {
        /// The crash.
        package var crash: CapturedException
        /// The event's `uuid`, `insert_id` or `$insert_id`.
        package var id: String?
        /// Its `release` or `$app_version`.
        package var release: String?
    }

    /// Reads the next value: an event (`{"event", "uuid", "properties", …}`) or its bare properties; nil (the
    /// value consumed) for anything but an `$exception` event with an exception list (``CapturedException/exceptionListProperty``) array.
    package static func readEvent(_ reader: inout JSONReader) throws(JSONReadError) -> ReadEvent? {
        guard try reader.peek() == .object else {
            try reader.skipValue()
            return nil
        }
        // Whether the properties are a member or the object itself (looked at on a copy of the reader).
        var probe = reader
        var wrapped = false
        try probe.readObject { reader, key throws(JSONReadError) in
            wrapped = wrapped || key == "properties"
            try reader.skipValue()
        }
        var event: [String: CohorlyValue] = [:]
        var fields: ExceptionEventFields?
        if wrapped {
            try reader.readObject { reader, key throws(JSONReadError) in
                switch key {
                case "properties":
                    fields = try reader.peek() == .object ? try ExceptionEventFields.read(&reader) : nil
                    if fields == nil { try reader.skipValue() }
                case "event", "uuid", "insert_id": event[key] = try reader.readScalar()
                default: try reader.skipValue()
                }
            }
        } else {
            let bare = try ExceptionEventFields.read(&reader)
            event = bare.members
            fields = bare
        }
        guard let fields, fields.listed, event["event"] == nil || event["event"] == .string("$exception") else {
            return nil
        }
        let properties = fields.members
        let id = event["uuid"] ?? event["insert_id"] ?? properties["$insert_id"]
        return ReadEvent(
            crash: CapturedException(fields: fields), id: id?.stringValue,
            release: properties["release"]?.stringValue ?? properties["$app_version"]?.stringValue)
    }
}

extension ExceptionEventFields {
    /// Reads a properties object.
    static func read(_ reader: inout JSONReader) throws(JSONReadError) -> ExceptionEventFields {
        var fields = ExceptionEventFields()
        try reader.readObject { reader, key throws(JSONReadError) in
            let kind = try reader.peek()
            switch key {
            case CapturedException.exceptionListProperty:
                fields.exception = nil
                fields.exceptionStack = Stack()
                fields.listedExceptions = []
                fields.listed = kind == .array
                guard kind == .array else { return try reader.skipValue() }
                try reader.readArray { reader throws(JSONReadError) in
                    // The first exception whole but its frames' unused members; of the others what the list says.
                    let first = fields.listedExceptions.isEmpty
                    guard try reader.peek() == .object else {
                        try reader.skipValue()
                        return fields.listedExceptions.append(CapturedException.ListedException(entry: .null))
                    }
                    var exception: [String: CohorlyValue] = [:]
                    try reader.readObject { reader, key throws(JSONReadError) in
                        switch key {
                        case "stacktrace" where first: fields.exceptionStack = try stack(&reader)
                        case "mechanism", "type", "value": exception[key] = try reader.readValue()
                        case _ where first: exception[key] = try reader.readScalar()
                        default: try reader.skipValue()
                        }
                    }
                    fields.listedExceptions.append(CapturedException.ListedException(entry: .object(exception)))
                    if first { fields.exception = exception }
                }
            case CapturedException.threadsProperty:
                fields.threads = []
                guard kind == .array else { return try reader.skipValue() }
                try reader.readArray { reader throws(JSONReadError) in
                    var thread = WireThread()
                    guard try reader.peek() == .object else {
                        try reader.skipValue()
                        return fields.threads.append(thread)
                    }
                    var members: [String: CohorlyValue] = [:]
                    try reader.readObject { reader, key throws(JSONReadError) in
                        if key == "stacktrace" {
                            thread.stack = try stack(&reader)
                        } else {
                            members[key] = try reader.readScalar()
                        }
                    }
                    thread.crashed = members["crashed"] == .bool(true)
                    thread.catchSite = members["catch_site"] == .bool(true)
                    thread.tid = members["thread_id"]
                    thread.name = members["name"]
                    fields.threads.append(thread)
                }
            case "$debug_images":
                fields.images = []
                guard kind == .array else { return try reader.skipValue() }
                try reader.readArray { reader throws(JSONReadError) in
                    fields.images.append(try shallow(&reader))
                }
            default:
                // Kept as the event's properties, or read by the crash.
                fields.members[key] = try reader.readValue()
            }
        }
        return fields
    }

    /// An object with its scalar members (nested containers emptied), or a scalar.
    private static func shallow(_ reader: inout JSONReader) throws(JSONReadError) -> CohorlyValue {
        try reader.peek() == .object ? .object(try reader.readShallowObject()) : try reader.readScalar()
    }

    /// A `stacktrace` value (empty when it is not an object).
    private static func stack(_ reader: inout JSONReader) throws(JSONReadError) -> Stack {
        var stack = Stack()
        guard try reader.peek() == .object else {
            try reader.skipValue()
            return stack
        }
        try reader.readObject { reader, key throws(JSONReadError) in
            switch key {
            case "frames":
                stack.frames = []
                guard try reader.peek() == .array else { return try reader.skipValue() }
                try reader.readArray { reader throws(JSONReadError) in
                    stack.frames.append(WireFrame(try shallow(&reader)))
                }
            case CapturedException.asyncStopKey: stack.asyncStop = try reader.readScalar().stringValue
            default: try reader.skipValue()
            }
        }
        return stack
    }
}
