/// Reads a report's bytes straight into the model (a ``JSONReader`` walk): frames, threads and modules are made
/// as their members are read, and only the crash-time context and breadcrumb data are kept as JSON, so memory
/// follows what the report keeps, not its JSON tree (a million-frame report took about 6× its size through the
/// tree). Gives exactly what ``CrashReport/read(_:requiringHeader:)-(CohorlyValue,_)`` gives for the parsed
/// document (the `crashinput` fuzz target checks it): the same members, the last of a repeated key winning, a
/// member of the wrong type reading as missing.
enum CrashReportStreaming {
    /// The report's members; the large ones made as they are read, the rest scalars (``JSONReader/readScalar()``).
    struct Members {
        var scalars: [String: CohorlyValue] = [:]
        var crashedThread: CrashReport.Thread?
        var threads: [CrashReport.Thread] = []
        var modules: [CrashReport.Module] = []
        var context: [String: CohorlyValue] = [:]
        var breadcrumbs: [Breadcrumb]?
        var taskContext: [String: CohorlyValue]?
    }

    static func document(_ reader: inout JSONReader) throws(JSONReadError) -> Members? {
        guard try reader.peek() == .object else {
            try reader.skipValue()
            return nil
        }
        var members = Members()
        try reader.readObject { reader, key throws(JSONReadError) in
            let kind = try reader.peek()
            switch key {
            case "crashed_thread": members.crashedThread = kind == .object ? try thread(&reader) : try skip(&reader)
            case "threads": members.threads = try objects(&reader, kind, thread)
            case "modules":
                members.modules = try objects(&reader, kind) { reader throws(JSONReadError) in
                    CrashReport.module(.object(try reader.readShallowObject()))
                }
            case "context":
                members.context = kind == .object ? try reader.readValue().objectValue ?? [:] : try skip(&reader) ?? [:]
            case "task_context":
                members.taskContext = kind == .object ? try reader.readValue().objectValue : try skip(&reader)
            case "breadcrumbs":
                members.breadcrumbs =
                    kind == .array
                    ? try objects(&reader, kind) { reader throws(JSONReadError) in
                        CrashReport.breadcrumb(.object(try reader.readShallowObject(keepingWhole: ["data"])))
                    } : try skip(&reader)
            case "signal", "cxx", "hang":
                // Small objects of scalars: read as the tree reader reads them, their nested containers emptied.
                members.scalars[key] =
                    kind == .object ? .object(try reader.readShallowObject()) : try reader.readScalar()
            default: members.scalars[key] = try reader.readScalar()
            }
        }
        return members
    }

    /// Skips a value; nil.
    private static func skip<T>(_ reader: inout JSONReader) throws(JSONReadError) -> T? {
        try reader.skipValue()
        return nil
    }

    /// The elements of an array made by `element` from its objects (others skipped, nil ones dropped); empty when
    /// the value is not an array.
    private static func objects<T>(
        _ reader: inout JSONReader, _ kind: JSONReader.Kind, _ element: (inout JSONReader) throws(JSONReadError) -> T?
    ) throws(JSONReadError) -> [T] {
        guard kind == .array else {
            try reader.skipValue()
            return []
        }
        var made: [T] = []
        try reader.readArray { reader throws(JSONReadError) in
            guard try reader.peek() == .object else { return try reader.skipValue() }
            if let one = try element(&reader) { made.append(one) }
        }
        return made
    }

    /// A thread object, as ``CrashReport/thread(_:)`` reads it.
    private static func thread(_ reader: inout JSONReader) throws(JSONReadError) -> CrashReport.Thread? {
        var scalars: [String: CohorlyValue] = [:]
        var registers: [String: Address]?
        var frames: [Frame] = []
        var async: (scalars: [String: CohorlyValue], frames: [Frame])?
        try reader.readObject { reader, key throws(JSONReadError) in
            let kind = try reader.peek()
            switch key {
            case "registers":
                registers = nil
                guard kind == .object else { return try reader.skipValue() }
                registers = try reader.readShallowObject().compactMapValues { Address(json: $0) }
            case "frames": frames = try self.frames(&reader, kind, positional: true)
            case "async":
                async = nil
                guard kind == .object else { return try reader.skipValue() }
                var chain: (scalars: [String: CohorlyValue], frames: [Frame]) = ([:], [])
                try reader.readObject { reader, key throws(JSONReadError) in
                    if key == "frames" {
                        chain.frames = try self.frames(&reader, try reader.peek(), positional: false)
                    } else {
                        chain.scalars[key] = try reader.readScalar()
                    }
                }
                async = chain
            default: scalars[key] = try reader.readScalar()
            }
        }
        let value = CohorlyValue.object(scalars)
        return CrashReport.Thread(
            tid: CrashReport.int32(value["tid"]), name: value["name"]?.stringValue ?? "",
            crashed: value["crashed"] == .bool(true), frames: frames,
            truncated: value["truncated"].map { $0 == .bool(true) } ?? true, registers: registers,
            async: async.flatMap {
                CrashReport.asyncChain(.object($0.scalars), frames: $0.frames, physicalCount: frames.count)
            })
    }

    /// Frames as ``CrashReport/frames(_:positional:)`` reads them; empty when the value is not an array.
    private static func frames(_ reader: inout JSONReader, _ kind: JSONReader.Kind, positional: Bool)
        throws(JSONReadError) -> [Frame]
    {
        guard kind == .array else {
            try reader.skipValue()
            return []
        }
        var frames: [Frame] = []
        try reader.readArray { reader throws(JSONReadError) in
            guard try reader.peek() == .object else {
                guard let address = Address(json: try reader.readScalar()) else { return }
                let kind: Frame.Kind = positional ? (frames.isEmpty ? .pc : .returnAddress) : .asyncResume
                return frames.append(Frame(address, kind: kind))
            }
            var address: CohorlyValue?
            var kind: CohorlyValue?
            try reader.readObject { reader, key throws(JSONReadError) in
                switch key {
                case "addr": address = try reader.readScalar()
                case "kind": kind = try reader.readScalar()
                default: try reader.skipValue()
                }
            }
            guard let address = Address(json: address) else { return }
            let fallback: Frame.Kind = positional ? .returnAddress : .asyncResume
            frames.append(Frame(address, kind: kind?.stringValue.map(Frame.Kind.init) ?? fallback))
        }
        return frames
    }
}
