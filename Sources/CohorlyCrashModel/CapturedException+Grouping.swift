extension CapturedException {
    /// What grouping an `$exception` into an issue reads of it (the collector does it for every event it stores):
    /// the reason, the level and the subject thread's in-app frames in caller-chain order, each with the
    /// function the device named for it and its image.
    public struct GroupingView: Sendable, Equatable {
        /// The reason, as ``init(exceptionEvent:)`` decides it.
        public var description: CrashDescription
        /// `$exception_level` (`fatal` when absent).
        public var level: String
        /// The in-app frames of the subject thread, in ``Thread/logicalFrames`` order.
        public var frames: [GroupingFrame]
    }

    /// One in-app frame as grouping reads it.
    public struct GroupingFrame: Sendable, Equatable {
        /// The address and its kind.
        public var frame: Frame
        /// The physical function the device resolved (its inlined calls left out): the function of the frame's
        /// own symbol, else of its outermost inlined call; nil when it resolved no name.
        public var function: String?
        /// The image holding the address (``imageIndex(containing:)``), when one does.
        public var image: Image?

        /// A frame.
        public init(frame: Frame, function: String?, image: Image?) {
            self.frame = frame
            self.function = function
            self.image = image
        }
    }

    /// The grouping view of an `$exception` event's properties: the same reading as ``init(exceptionEvent:)``
    /// (the same frames, reduced as ``ExceptionEventParts`` reduces them, in the same order, with the same images),
    /// limited to what grouping looks at — the first exception, and of its frames only the in-app ones' names —
    /// so a collector storing thousands of events a second does not build the whole model of each.
    /// ``groupingFrames(symbols:)`` of the model read in full gives the same frames.
    public static func groupingView(exceptionEvent properties: CohorlyValue) -> GroupingView {
        let exception = properties["$exception_list"]?.arrayValue?.first
        let facts = Self.facts(exception, properties: properties)
        // The frames of the first exception only, symbols only where they can name an in-app frame.
        let frames = (exception?["stacktrace"]?["frames"]?.arrayValue ?? []).map {
            ExceptionEventParts.WireFrame($0, allSymbols: false)
        }
        // Physical frames oldest first (as `thread` reads them), with what the device named for in-app ones:
        // the function of the frame's own symbol, else of its outermost inlined call (reduced as
        // ExceptionEventParts reduces them).
        var ordered: [OrderedGroupingFrame] = []
        ordered.reserveCapacity(frames.count)
        for frame in frames {
            if !frame.inlined {
                guard let pc = frame.pc else { continue }
                ordered.append(
                    OrderedGroupingFrame(
                        frame: Frame(pc, kind: frame.kind ?? .returnAddress), hasKind: frame.kind != nil,
                        inApp: frame.inApp))
            }
            // The inlined calls join the frame before them; the outermost one names a frame without its own.
            guard let last = ordered.indices.last, ordered[last].inApp, let symbol = frame.symbol else { continue }
            if !frame.inlined {
                ordered[last].own = .some(symbol.function)
            } else if ordered[last].inlined == nil {
                ordered[last].inlined = .some(symbol.function)
            }
        }
        // Innermost first; the async callers after the physical frame they continue from.
        var physical: [GroupingFrame?] = []
        var asyncFrames: [GroupingFrame?] = []
        physical.reserveCapacity(ordered.count)
        var anchor: Int?
        for (index, entry) in ordered.reversed().enumerated() {
            var frame = entry.frame
            if !entry.hasKind && index == 0 { frame.kind = .pc }
            let grouping =
                entry.inApp
                ? GroupingFrame(frame: frame, function: (entry.own ?? entry.inlined) ?? nil, image: nil) : nil
            if frame.kind == .asyncResume && !physical.isEmpty {
                if anchor == nil { anchor = physical.count - 1 }
                asyncFrames.append(grouping)
            } else {
                physical.append(grouping)
            }
        }
        var logical = physical
        if let anchor { logical = Array(physical[...anchor]) + asyncFrames + physical[(anchor + 1)...] }
        var inApp = logical.compactMap { $0 }
        if !inApp.isEmpty {
            let images = Self.images(properties["$debug_images"]?.arrayValue ?? [], frames: frames)
            for index in inApp.indices {
                let address = inApp[index].frame.address.value
                inApp[index].image = images.first { $0.contains(address) }
            }
        }
        return GroupingView(
            description: CrashReason.describe(facts), level: properties["$exception_level"]?.stringValue ?? "fatal",
            frames: inApp)
    }

    /// The grouping frames of this model (its subject thread's in-app frames in caller-chain order), with
    /// `symbols` giving each frame's symbols (nil: the ones it has). A frame the device left raw (in-app by its
    /// image) that `symbols` names is in-app as `code` decides (``StackFrame/inApp(namedBy:code:)``).
    public func groupingFrames(symbols: (StackFrame) -> [FrameSymbol]? = { _ in nil }, code: AppCode = AppCode())
        -> [GroupingFrame]
    {
        (subject?.logicalFrames ?? []).filter(\.inApp).compactMap { frame in
            let found = symbols(frame) ?? frame.symbols
            guard frame.inApp(namedBy: found, code: code) else { return nil }
            return GroupingFrame(
                frame: frame.frame, function: (found.last { !$0.inlined } ?? found.last)?.function,
                image: imageIndex(containing: frame.frame.address.value).map { images[$0] })
        }
    }
}

/// A physical frame while ``CapturedException/groupingView(exceptionEvent:)`` orders them: only the functions of
/// its symbols, not the symbols (a tuple of two `FrameSymbol?` copied four strings per frame of every event the
/// collector groups: 0.75× and 0.79× of `--no-issues` in scripts/bench-collector, against 0.80× and 0.80× this way, runs taken in turn).
private struct OrderedGroupingFrame {
    var frame: Frame
    /// Whether the event said its kind.
    var hasKind: Bool
    var inApp: Bool
    /// The function of its own symbol: nil without a symbol, `.some(nil)` for a symbol without a function.
    var own: String?? = nil
    /// The same of its outermost inlined call.
    var inlined: String?? = nil
}
