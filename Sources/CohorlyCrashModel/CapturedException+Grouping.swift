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
        /// The function the frame counts as, after inline expansion: its innermost symbol that is the app's code
        /// (``isAppSymbol(linkageName:physicalLinkageName:)``) and not a `Swift runtime failure: …` pseudo-frame
        /// (``culpritSymbol(of:)``); nil when the device resolved no name.
        public var function: String?
        /// That symbol's short name (``FrameSymbol/shortFunction``), when the device made one.
        public var shortFunction: String?
        /// That symbol's linkage name (the mangled Swift name), when known.
        public var rawFunction: String?
        /// The image holding the address (``imageIndex(containing:)``), when one does.
        public var image: Image?

        /// A frame.
        public init(
            frame: Frame, function: String?, shortFunction: String? = nil, rawFunction: String? = nil, image: Image?
        ) {
            self.frame = frame
            self.function = function
            self.shortFunction = shortFunction
            self.rawFunction = rawFunction
            self.image = image
        }
    }

    /// Whether a symbol of an in-app frame is the app's code: the one place grouping asks it. The frame's `in_app`
    /// answers for its physical function; a call inlined into it is the app's too, unless its linkage name names
    /// another Swift module than the physical function's (the standard library's `Array.subscript`, a
    /// dependency's accessor inlined into the app's function).
    public static func isAppSymbol(linkageName: String?, physicalLinkageName: String?) -> Bool {
        guard let module = linkageName.flatMap(SwiftMangling.module(of:)),
            let physical = physicalLinkageName.flatMap(SwiftMangling.module(of:))
        else { return true }
        return module == physical
    }

    /// Of an in-app frame's symbols (innermost first, the physical function last, as ``StackFrame/symbols``), the
    /// index of the one the frame counts as: the innermost app symbol (``isAppSymbol(linkageName:
    /// physicalLinkageName:)``) with a function that is not a `Swift runtime failure: …` pseudo-frame; else the
    /// physical function's; nil for no symbols.
    public static func culpritSymbol(
        count: Int, function: (Int) -> String?, linkageName: (Int) -> String?
    ) -> Int? {
        guard count > 0 else { return nil }
        let physical = linkageName(count - 1)
        for index in 0..<count {
            guard let name = function(index), CrashReason.runtimeFailure(name) == nil,
                isAppSymbol(linkageName: linkageName(index), physicalLinkageName: physical)
            else { continue }
            return index
        }
        return count - 1
    }

    /// The grouping view of an `$exception` event's properties: the same reading as ``init(exceptionEvent:)``
    /// (the same frames, reduced as ``ExceptionEventFields`` reduces them, in the same order, with the same images),
    /// limited to what grouping looks at — the first exception, and of its frames only the in-app ones' names —
    /// so a collector storing thousands of events a second does not build the whole model of each.
    /// ``groupingFrames(symbols:)`` of the model read in full gives the same frames.
    public static func groupingView(exceptionEvent properties: CohorlyValue) -> GroupingView {
        let exception = properties[exceptionListProperty]?.arrayValue?.first
        let facts = Self.facts(exception, properties: properties)
        // The frames of the first exception only, symbols only where they can name an in-app frame.
        let frames = (exception?["stacktrace"]?["frames"]?.arrayValue ?? []).map {
            ExceptionEventFields.WireFrame($0, allSymbols: false)
        }
        // Physical frames oldest first (as `thread` reads them), with what the device named for in-app ones:
        // the frame's own symbol and its inlined calls (reduced as ExceptionEventFields reduces them).
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
            // The inlined calls join the frame before them, from the outermost inward.
            guard let last = ordered.indices.last, ordered[last].inApp, let symbol = frame.symbol else { continue }
            let name = GroupingName(
                function: symbol.function, shortFunction: symbol.shortFunction, rawFunction: symbol.rawFunction)
            if !frame.inlined {
                ordered[last].names.insert(name, at: 0)
                ordered[last].hasOwn = true
            } else {
                ordered[last].names.append(name)
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
            let grouping = entry.inApp ? entry.groupingFrame(frame) : nil
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
            description: CrashReason.describe(facts), level: properties[levelProperty]?.stringValue ?? "fatal",
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
            let image = imageIndex(containing: frame.frame.address.value).map { images[$0] }
            guard
                let index = Self.culpritSymbol(
                    count: found.count, function: { found[$0].function }, linkageName: { found[$0].rawFunction })
            else { return GroupingFrame(frame: frame.frame, function: nil, image: image) }
            let symbol = found[index]
            return GroupingFrame(
                frame: frame.frame, function: symbol.function, shortFunction: symbol.shortFunction,
                rawFunction: symbol.rawFunction, image: image)
        }
    }
}

/// A physical frame while ``CapturedException/groupingView(exceptionEvent:)`` orders them: only the names of its
/// symbols, not the symbols (a tuple of two `FrameSymbol?` copied four strings per frame of every event the
/// collector groups: 0.75× and 0.79× of `--no-issues` in scripts/bench-collector, against 0.80× and 0.80× this way,
/// runs taken in turn).
private struct OrderedGroupingFrame {
    var frame: Frame
    /// Whether the event said its kind.
    var hasKind: Bool
    var inApp: Bool
    /// Its symbols' names, outermost first: its own symbol (when `hasOwn`), then its inlined calls inward.
    var names: [GroupingName] = []
    var hasOwn = false

    /// The grouping frame: named by ``CapturedException/culpritSymbol(count:function:linkageName:)`` over its
    /// symbols, innermost first (a frame without a symbol of its own counts its outermost inlined call as its
    /// physical function).
    func groupingFrame(_ frame: Frame) -> CapturedException.GroupingFrame {
        let innermostFirst = Array(names.reversed())
        guard
            let index = CapturedException.culpritSymbol(
                count: innermostFirst.count, function: { innermostFirst[$0].function },
                linkageName: { innermostFirst[$0].rawFunction })
        else { return CapturedException.GroupingFrame(frame: frame, function: nil, image: nil) }
        let name = innermostFirst[index]
        return CapturedException.GroupingFrame(
            frame: frame, function: name.function, shortFunction: name.shortFunction, rawFunction: name.rawFunction,
            image: nil)
    }
}

/// The names of one symbol as grouping reads them.
private struct GroupingName {
    var function: String?
    var shortFunction: String?
    var rawFunction: String?
}
