import CohorlyCrashModel

/// The JSON of a symbolicated crash (docs/report-format.md): the reason, the signal, each thread with its frames
/// (`index`, `instruction_addr`, `module`, `image_addr`, `file_address`, `kind`, `symbols`, `in_app`) and its
/// async callers, and the modules left raw. Keys are written in the order they always were.
extension SymbolicatedCrash: Codable {
    enum CodingKeys: String, CodingKey {
        case reason, signal, mechanism, handled, executable, complete, threads
        case reasonSource = "reason_source"
        case unsymbolicatedModules = "unsymbolicated_modules"
        case modulesWithoutDebugInfo = "modules_without_debug_info"
    }

    enum SignalKeys: String, CodingKey {
        case name, number, code, address
    }

    enum ThreadKeys: String, CodingKey {
        case tid, name, crashed, truncated, frames
        case asyncFrames = "async_frames"
        case asyncAnchor = "async_anchor"
        case asyncStop = "async_stop"
    }

    enum FrameKeys: String, CodingKey {
        case index, module, symbols, kind
        case inApp = "in_app"
        case instructionAddr = "instruction_addr"
        case imageAddr = "image_addr"
        case fileAddress = "file_address"
    }

    /// Writes the crash's JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(reason, forKey: .reason)
        if let signal = exception.facts.signal {
            var fields = container.nestedContainer(keyedBy: SignalKeys.self, forKey: .signal)
            try fields.encodeIfPresent(signal.name.isEmpty ? nil : signal.name, forKey: .name)
            try fields.encode(Int(signal.number), forKey: .number)
            try fields.encode(Int(signal.code), forKey: .code)
            try fields.encode(signal.address.description, forKey: .address)
        }
        try container.encodeIfPresent(mechanism, forKey: .mechanism)
        try container.encode(exception.handled, forKey: .handled)
        try container.encodeIfPresent(exception.executable, forKey: .executable)
        try container.encode(exception.complete, forKey: .complete)
        var threads = container.nestedUnkeyedContainer(forKey: .threads)
        for thread in exception.threads { try Self.encode(thread, into: threads.superEncoder()) }
        try container.encode(reasonSource, forKey: .reasonSource)
        try container.encode(unsymbolicatedModules, forKey: .unsymbolicatedModules)
        try container.encodeIfPresent(modulesWithoutDebugInfo, forKey: .modulesWithoutDebugInfo)
    }

    private static func encode(_ thread: CapturedException.Thread, into encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ThreadKeys.self)
        try container.encodeIfPresent(thread.tid.map(Int.init), forKey: .tid)
        try container.encodeIfPresent(thread.name, forKey: .name)
        try container.encode(thread.crashed, forKey: .crashed)
        try container.encode(thread.truncated, forKey: .truncated)
        var frames = container.nestedUnkeyedContainer(forKey: .frames)
        for (index, frame) in thread.frames.enumerated() { try encode(frame, index, into: frames.superEncoder()) }
        if let chain = thread.async {
            var asyncFrames = container.nestedUnkeyedContainer(forKey: .asyncFrames)
            for (index, frame) in chain.frames.enumerated() {
                try encode(frame, index, into: asyncFrames.superEncoder())
            }
            try container.encode(chain.anchor, forKey: .asyncAnchor)
            try container.encode(chain.stop.rawValue, forKey: .asyncStop)
        }
    }

    private static func encode(_ frame: CapturedException.StackFrame, _ index: Int, into encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: FrameKeys.self)
        try container.encode(index, forKey: .index)
        try container.encodeIfPresent(frame.lookup?.imagePath, forKey: .module)
        try container.encode(frame.symbols, forKey: .symbols)
        try container.encode(frame.frame.kind.wireName, forKey: .kind)
        try container.encodeIfPresent(frame.inAppAnswer, forKey: .inApp)
        try container.encode(frame.frame.address.description, forKey: .instructionAddr)
        try container.encodeIfPresent(frame.lookup?.imageBase.map(Address.init)?.description, forKey: .imageAddr)
        try container.encodeIfPresent(frame.lookup?.fileAddress.map(Address.init)?.description, forKey: .fileAddress)
    }

    /// Reads a crash from its JSON (as the collector serves it to `cohorly crashes show`). What the JSON does not
    /// carry stays empty: a missing `handled` reads false, a signal's missing parts 0 (its name empty).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reason = try container.decode(String.self, forKey: .reason)
        reasonSource = try container.decode(String.self, forKey: .reasonSource)
        mechanism = try container.decodeIfPresent(String.self, forKey: .mechanism)
        unsymbolicatedModules = try container.decode([MissingModule].self, forKey: .unsymbolicatedModules)
        modulesWithoutDebugInfo = try container.decodeIfPresent([MissingModule].self, forKey: .modulesWithoutDebugInfo)
        var signal: CrashReport.Signal?
        if container.contains(.signal), try !container.decodeNil(forKey: .signal) {
            let fields = try container.nestedContainer(keyedBy: SignalKeys.self, forKey: .signal)
            let address = try fields.decodeIfPresent(String.self, forKey: .address).flatMap { Address(hex: $0) }
            signal = CrashReport.Signal(
                number: try fields.decodeIfPresent(Int32.self, forKey: .number) ?? 0,
                name: try fields.decodeIfPresent(String.self, forKey: .name) ?? "",
                code: try fields.decodeIfPresent(Int32.self, forKey: .code) ?? 0, address: address ?? Address(0))
        }
        let handled = try container.decodeIfPresent(Bool.self, forKey: .handled) ?? false
        exception = CapturedException(
            description: CrashDescription(
                type: reason, value: "", mechanism: mechanism ?? "", issueName: nil, source: reasonSource),
            facts: CrashReason.Facts(signal: signal), level: handled ? "error" : "fatal", handled: handled)
        exception.executable = try container.decodeIfPresent(String.self, forKey: .executable)
        exception.complete = try container.decode(Bool.self, forKey: .complete)
        var threads = try container.nestedUnkeyedContainer(forKey: .threads)
        while !threads.isAtEnd { exception.threads.append(try Self.thread(from: threads.superDecoder())) }
    }

    private static func thread(from decoder: any Decoder) throws -> CapturedException.Thread {
        let container = try decoder.container(keyedBy: ThreadKeys.self)
        var thread = CapturedException.Thread(
            tid: try container.decodeIfPresent(Int32.self, forKey: .tid),
            name: try container.decodeIfPresent(String.self, forKey: .name),
            crashed: try container.decode(Bool.self, forKey: .crashed),
            truncated: try container.decode(Bool.self, forKey: .truncated),
            frames: try frames(container, .frames))
        // Async callers count only with the frame they continue from.
        if let anchor = try container.decodeIfPresent(Int.self, forKey: .asyncAnchor), anchor >= 0,
            container.contains(.asyncFrames), try !container.decodeNil(forKey: .asyncFrames)
        {
            let stop = try container.decodeIfPresent(String.self, forKey: .asyncStop)
            thread.async = CapturedException.AsyncStack(
                anchor: anchor, stop: stop.map(AsyncChain.Stop.init(wireName:)) ?? .taskRoot,
                frames: try frames(container, .asyncFrames))
        }
        return thread
    }

    private static func frames(_ container: KeyedDecodingContainer<ThreadKeys>, _ key: ThreadKeys) throws
        -> [CapturedException.StackFrame]
    {
        var list = try container.nestedUnkeyedContainer(forKey: key)
        var frames: [CapturedException.StackFrame] = []
        while !list.isAtEnd { frames.append(try frame(from: list.superDecoder())) }
        return frames
    }

    private static func frame(from decoder: any Decoder) throws -> CapturedException.StackFrame {
        let container = try decoder.container(keyedBy: FrameKeys.self)
        let text = try container.decode(String.self, forKey: .instructionAddr)
        guard let address = Address(hex: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: .instructionAddr, in: container, debugDescription: "not a hex address: \(text)")
        }
        let kind = try container.decodeIfPresent(String.self, forKey: .kind).map(Frame.Kind.init(wireName:))
        let inApp = try container.decodeIfPresent(Bool.self, forKey: .inApp)
        var frame = CapturedException.StackFrame(
            Frame(address, kind: kind ?? .returnAddress), inApp: inApp ?? false,
            symbols: try container.decode([FrameSymbol].self, forKey: .symbols))
        func hex(_ key: FrameKeys) throws -> UInt64? {
            try container.decodeIfPresent(String.self, forKey: key).flatMap { Address(hex: $0)?.value }
        }
        frame.lookup = FrameLookup(
            imagePath: try container.decodeIfPresent(String.self, forKey: .module), imageBase: try hex(.imageAddr),
            fileAddress: try hex(.fileAddress), decidesInApp: inApp != nil)
        return frame
    }
}
