import CohorlySymbols

extension CrashInput {
    /// The crash in an `$exception` event's properties: the one reading of the event shape, used by the collector
    /// (`cohorly crashes show`) and by `cohorly symbolicate EVENT.json`.
    ///
    /// Reads PostHog's native shape (research/posthog.md part C): `$exception_list[0]` with `type`, `value`,
    /// `mechanism` and `stacktrace.frames` oldest first (`instruction_addr`, `image_addr`, `module`; `inline: true`
    /// frames repeat their physical frame's address and are folded under it; the `function`, `filename`, `lineno`
    /// and `colno` the device resolved are kept as client symbols, shown where nothing here resolves the frame),
    /// `$exception_threads`, and `$debug_images` (`code_file`, `code_id`, `image_addr`, `image_size`). Addresses
    /// are `0x…` strings. A frame
    /// whose image is not among `$debug_images` still gets an image from its own `module` and `image_addr`, so it
    /// stays raw with its module named. Events come from the network or from files: nothing in them can trap.
    package init(exceptionEvent properties: CohorlyValue) {
        let exception = properties["$exception_list"]?.arrayValue?.first
        var threads = [
            Self.thread(
                exception?["stacktrace"], tid: exception?["thread_id"]?.intValue,
                name: properties["$exception_thread_name"]?.stringValue, crashed: true)
        ]
        for other in properties["$exception_threads"]?.arrayValue ?? [] {
            // A producer may list the crashed thread again among all threads.
            if other["crashed"] == .bool(true) { continue }
            threads.append(
                Self.thread(
                    other["stacktrace"], tid: other["thread_id"]?.intValue, name: other["name"]?.stringValue,
                    crashed: false))
        }
        var frames = exception?["stacktrace"]?["frames"]?.arrayValue ?? []
        for other in properties["$exception_threads"]?.arrayValue ?? [] {
            frames += other["stacktrace"]?["frames"]?.arrayValue ?? []
        }
        self.init(threads: threads, images: Self.images(properties["$debug_images"], frames: frames))
        let type = exception?["type"]?.stringValue
        let value = exception?["value"]?.stringValue
        let mechanism = exception?["mechanism"]
        switch mechanism?["type"]?.stringValue {
        case "swift_fatal" where type?.hasPrefix("Swift runtime failure") == true:
            signalDescription = type  // a release trap named by the device: the frames name it again
        case "swift", "swift_fatal": message = [type, value].compactMap { $0 }.joined(separator: ": ")
        case "cxx", "cxx_exception":
            cxxType = type
            cxxWhat = value
        default: signalDescription = [type, value].compactMap { $0 }.joined(separator: ": ")
        }
        let signal = mechanism?["meta"]?["signal"]
        signalName = signal?["name"]?.stringValue
        signalNumber = signal?["number"]?.intValue
        signalCode = signal?["code"]?.intValue
        faultAddress = signal?["address"]?.stringValue
        self.mechanism = mechanism?["type"]?.stringValue
        executable = properties["$exception_executable"]?.stringValue
        if case .bool(false)? = properties["$exception_report_complete"] { complete = false }
    }

    /// A thread from a stacktrace: frames oldest first → physical frames innermost first (`inline: true` frames
    /// repeat their physical frame's address), each with the symbols the device resolved, its inlined calls
    /// innermost first, then itself.
    private static func thread(_ stacktrace: CohorlyValue?, tid: Int?, name: String?, crashed: Bool) -> Thread {
        var addresses: [UInt64] = []
        var symbols: [[SymbolicatedCrash.Symbol]] = []
        for frame in stacktrace?["frames"]?.arrayValue ?? [] {
            let inlined = frame["inline"] == .bool(true)
            if !inlined {
                guard let pc = address(frame["instruction_addr"]) else { continue }
                addresses.append(pc)
                symbols.append([])
            }
            guard !symbols.isEmpty, let symbol = clientSymbol(frame, inlined: inlined) else { continue }
            symbols[symbols.count - 1].insert(symbol, at: 0)
        }
        return Thread(
            tid: tid, name: name, crashed: crashed, truncated: false, addresses: addresses.reversed(),
            clientSymbols: symbols.reversed())
    }

    /// What the device resolved for one frame (nil when it resolved nothing). Numbers from the network: a line
    /// or column outside 0…2³¹ is read as unknown.
    private static func clientSymbol(_ frame: CohorlyValue, inlined: Bool) -> SymbolicatedCrash.Symbol? {
        let function = frame["function"]?.stringValue
        let file = frame["filename"]?.stringValue
        guard function != nil || file != nil else { return nil }
        let line = frame["lineno"]?.intValue.flatMap { (0...Int(Int32.max)).contains($0) ? $0 : nil } ?? 0
        let column = frame["colno"]?.intValue.flatMap { (0...Int(Int32.max)).contains($0) ? $0 : nil } ?? 0
        return SymbolicatedCrash.Symbol(function: function, file: file, line: line, column: column, inlined: inlined)
    }

    /// `$debug_images`, plus an image for each (`module`, `image_addr`) of a frame that none of them covers,
    /// sized to reach the frame's highest address.
    private static func images(_ list: CohorlyValue?, frames: [CohorlyValue]) -> [LoadedImage] {
        var images = (list?.arrayValue ?? []).compactMap { image -> LoadedImage? in
            guard let path = image["code_file"]?.stringValue, let base = address(image["image_addr"]) else {
                return nil
            }
            // A negative or absurd size is read as unknown, never trapped on.
            let size =
                image["image_size"]?.intValue.flatMap { UInt64(exactly: $0) } ?? address(image["image_size"]) ?? 0
            let buildId = image["code_id"]?.stringValue.flatMap { $0.isEmpty ? nil : DebugId.buildId(hex: $0) }
            return LoadedImage(path: path, base: base, size: size, buildId: buildId)
        }
        var extra: [UInt64: (module: String, end: UInt64)] = [:]
        for frame in frames {
            guard let base = address(frame["image_addr"]), let pc = address(frame["instruction_addr"]), pc >= base,
                !images.contains(where: { $0.base <= pc && pc - $0.base < $0.size })
            else { continue }
            let module = frame["module"]?.stringValue ?? extra[base]?.module ?? "???"
            extra[base] = (module, max(extra[base]?.end ?? 0, pc))
        }
        for (base, image) in extra.sorted(by: { $0.key < $1.key }) {
            if let known = images.firstIndex(where: { $0.base == base }) {
                images[known].size = max(images[known].size, min(image.end - base, UInt64.max - 1) + 1)
            } else {
                let size = min(image.end - base, UInt64.max - 1) + 1
                images.append(LoadedImage(path: image.module, base: base, size: size, buildId: nil))
            }
        }
        return images
    }

    /// A `0x…` hex string (PostHog's form of every address).
    private static func address(_ value: CohorlyValue?) -> UInt64? {
        guard var text = value?.stringValue else { return nil }
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text.removeFirst(2) }
        return UInt64(text, radix: 16)
    }
}
