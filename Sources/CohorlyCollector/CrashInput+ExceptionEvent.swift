import CohorlySymbols

extension CrashInput {
    /// The crash in an `$exception` event's properties: the one reading of the event shape, used by the collector
    /// (`cohorly crashes show`) and by `cohorly symbolicate EVENT.json`.
    ///
    /// Reads PostHog's native shape (research/posthog.md part C): `$exception_list[0]` with `type`, `value`,
    /// `mechanism` and `stacktrace.frames` oldest first (`instruction_addr`, `image_addr`, `module`; `inline: true`
    /// frames repeat their physical frame's address and are skipped), `$exception_threads`, and `$debug_images`
    /// (`code_file`, `code_id`, `image_addr`, `image_size`). Addresses are `0x…` strings. A frame
    /// whose image is not among `$debug_images` still gets an image from its own `module` and `image_addr`, so it
    /// stays raw with its module named. Events come from the network or from files: nothing in them can trap.
    package init(exceptionEvent properties: CohorlyValue) {
        let exception = properties["$exception_list"]?.arrayValue?.first
        var threads = [
            Self.thread(exception?["stacktrace"], tid: exception?["thread_id"]?.intValue, name: nil, crashed: true)
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

    /// A thread from a stacktrace (frames oldest first → innermost first; inline frames dropped).
    private static func thread(_ stacktrace: CohorlyValue?, tid: Int?, name: String?, crashed: Bool) -> Thread {
        let frames = stacktrace?["frames"]?.arrayValue ?? []
        let addresses = frames.reversed().compactMap { frame -> UInt64? in
            frame["inline"] == .bool(true) ? nil : address(frame["instruction_addr"])
        }
        return Thread(tid: tid, name: name, crashed: crashed, truncated: false, addresses: addresses)
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
