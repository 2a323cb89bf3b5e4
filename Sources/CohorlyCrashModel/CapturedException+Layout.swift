/// How every wire lays a thread out: its caller chain oldest first (the crash site last), each frame followed by
/// the calls inlined into it, each with the image it lies in. The `$exception` renderer and the Sentry renderer
/// both walk this, so the two wires cannot disagree on order, kinds or images.
extension CapturedException {
    /// One frame of a laid-out stack: a physical or async frame (with its kind), or an inlined call inside the
    /// frame before it (sharing its address).
    public struct LaidOutFrame: Sendable, Equatable {
        /// The frame it stands for (an inlined call: its physical frame).
        public var stackFrame: StackFrame
        /// The symbol it shows (the physical function, or the inlined call); nil when the frame is raw.
        public var symbol: FrameSymbol?
        /// Whether it is an inlined call inside the frame before it.
        public var inlined: Bool
        /// The image holding its address.
        public var image: Image?

        /// The frame's kind, for a physical or async frame (an inlined call has its physical frame's).
        public var kind: Frame.Kind? { inlined ? nil : stackFrame.frame.kind }

        /// Whether the device resolved it (a function, or a place in the source, is known).
        public var resolved: Bool { symbol.map { $0.function != nil || Self.hasLine($0) } ?? false }

        /// Whether the symbol's file is a place in the source: the line table put the address on a line. A file
        /// with line 0 is a compile unit's or an `STT_FILE` symbol's name (`crtstuff.c`, `Swift.o`), not where the
        /// frame is: the wires send no file for it.
        public var hasSourceLocation: Bool { symbol.map(Self.hasLine) ?? false }

        /// The Swift linkage (mangled) name the function was demangled from, when it is one (a reader makes
        /// either naming style from it; a C or C++ name reads the same in both): sent as `symbol`.
        public var swiftMangledName: String? {
            guard let raw = symbol?.rawFunction, SwiftMangling.isMangled(raw) else { return nil }
            return raw
        }

        private static func hasLine(_ symbol: FrameSymbol) -> Bool {
            !(symbol.file ?? "").isEmpty && symbol.line > 0
        }

        /// `swift`, `cpp` or `c`: the one an event named (``FrameSymbol/language``), else from the mangling of the
        /// name or the source file's extension; nil if unsure.
        public var language: String? {
            guard let symbol else { return nil }
            return symbol.language ?? Self.language(of: symbol)
        }

        /// The language told from `symbol`'s mangled name or its source file's extension; nil if unsure.
        static func language(of symbol: FrameSymbol) -> String? {
            let raw = symbol.rawFunction ?? ""
            if SwiftMangling.isMangled(raw) { return "swift" }
            if raw.hasPrefix("_Z") { return "cpp" }
            if CrashReason.runtimeFailure(symbol.function) != nil { return "swift" }
            guard hasLine(symbol), let file = symbol.file, let dot = file.lastIndex(of: ".") else { return nil }
            switch file[file.index(after: dot)...] {
            case "swift": return "swift"
            case "cpp", "cc", "cxx", "hpp", "hh", "hxx": return "cpp"
            case "c": return "c"
            default: return nil
            }
        }
    }

    /// The thread's frames oldest first, grouped per frame of its caller chain (physical frames down to the
    /// anchor, the async callers, the executor's frames below): the frame, then its inlined calls from the
    /// outermost inward.
    public func laidOutGroups(of thread: Thread) -> [[LaidOutFrame]] {
        let lookup = ImageLookup(images)
        return thread.logicalFrames.reversed().map { stackFrame in
            let image = lookup.image(containing: stackFrame.frame.address.value)
            guard let physical = stackFrame.symbols.last else {
                return [LaidOutFrame(stackFrame: stackFrame, symbol: nil, inlined: false, image: image)]
            }
            return [LaidOutFrame(stackFrame: stackFrame, symbol: physical, inlined: false, image: image)]
                + stackFrame.symbols.dropLast().reversed().map {
                    LaidOutFrame(stackFrame: stackFrame, symbol: $0, inlined: true, image: image)
                }
        }
    }

    /// The thread's frames oldest first (``laidOutGroups(of:)`` flattened).
    public func laidOutFrames(of thread: Thread) -> [LaidOutFrame] { laidOutGroups(of: thread).flatMap { $0 } }

    /// The thread the wires carry in the exception itself: the crashed (hung, capturing) one; nil when none is
    /// marked (a salvaged report: every thread is then one of the ``otherThreads``).
    public var crashedThread: Thread? { threads.first(where: \.crashed) }

    /// The threads the wires list beside the exception, in their order.
    public var otherThreads: [Thread] { threads.filter { !$0.crashed } }

    /// The images holding a frame of `frames` and having a build id (a wire's debug images), in the images'
    /// order.
    public func debugImages(referencedBy frames: [LaidOutFrame]) -> [Image] {
        let referenced = Set(frames.compactMap { $0.image?.base })
        return images.filter { referenced.contains($0.base) && !$0.debugId.isEmpty }
    }

    /// The `arch` of the debug images: the report's, else the architecture this code was compiled for.
    public var debugImageArch: String {
        if let arch { return arch }
        #if arch(x86_64)
            return "x86_64"
        #elseif arch(arm64)
            return "aarch64"
        #else
            return "unknown"
        #endif
    }

    /// Address → image, by binary search over the images' bases.
    struct ImageLookup {
        let images: [Image]
        private let sorted: [(base: UInt64, index: Int)]

        init(_ images: [Image]) {
            self.images = images
            sorted = images.enumerated().map { ($0.element.base, $0.offset) }.sorted { $0.base < $1.base }
        }

        func image(containing address: UInt64) -> Image? {
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle].base <= address { low = middle + 1 } else { high = middle }
            }
            guard low > 0 else { return nil }
            let image = images[sorted[low - 1].index]
            return address - image.base < image.size ? image : nil
        }
    }
}

extension CapturedException.Image {
    /// The first 16 bytes of the build id (zero-padded) as a GUID with its first three fields byte-swapped
    /// (Sentry's rule for little-endian ELF, age 0): `02547a30…` → `307a5402-…`; empty without a valid build id.
    public var debugId: String {
        guard let bytes = BuildIdentifier.bytes(fromHex: buildId), !bytes.isEmpty else { return "" }
        return BuildIdentifier.debugId(bytes)
    }
}
