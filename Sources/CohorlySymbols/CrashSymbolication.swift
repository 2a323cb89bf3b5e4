import CohorlyCrashModel

/// Turns a ``CapturedException`` (a report's crash, a stored `$exception` event) into a ``SymbolicatedCrash``
/// with one ``ImageSymbolicator`` (each module's index is built once and reused for every address). Every frame
/// is looked up by its kind: only a return address one byte back.
public enum CrashSymbolicator {
    /// Symbolicates every thread of `exception` (physical and async frames), finding debug files with `locator`.
    /// Where nothing here resolves an address, the symbols the crashed device resolved stand. The reason is
    /// decided again with the crash site found here (``CrashReason/describe(_:crashSite:)``).
    public static func symbolicate(_ exception: CapturedException, locator: DebugFileLocator) -> SymbolicatedCrash {
        let symbolicator = ImageSymbolicator(images: exception.images.map(LoadedImage.init(image:)), locator: locator)
        let ordered = exception.threads.filter(\.crashed) + exception.threads.filter { !$0.crashed }
        // Frames named here are in-app as the device decides (AppCode, the root from the executable's DWARF).
        let code = exception.appCode { symbolicator.sourceRoot(ofImageAt: $0.path) }
        let threads = ordered.map { thread in
            var symbolicated = SymbolicatedCrash.Thread(
                tid: thread.tid.map(Int.init), name: thread.name, crashed: thread.crashed, truncated: thread.truncated,
                frames: thread.frames.enumerated().map { frame(index: $0, $1, symbolicator, code) })
            if let chain = thread.async {
                symbolicated.asyncFrames = chain.frames.enumerated().map { frame(index: $0, $1, symbolicator, code) }
                symbolicated.asyncAnchor = chain.anchor
                symbolicated.asyncStop = chain.stop.rawValue
            }
            return symbolicated
        }
        let crashSite = threads.first(where: \.crashed)?.frames.first?.symbols.map(\.function) ?? []
        let description = CrashReason.describe(exception.facts, crashSite: crashSite)
        let missing = symbolicator.failures.map { failure in
            SymbolicatedCrash.MissingModule(
                path: failure.image.path, buildId: failure.image.buildId.map(DebugId.codeId),
                error: failure.error.description)
        }
        let withoutDebugInfo = symbolicator.modulesWithoutDebugInfo.map { image in
            SymbolicatedCrash.MissingModule(
                path: image.path, buildId: image.buildId.map(DebugId.codeId),
                error: "no debug file found: symbol names only")
        }
        let signal = exception.facts.signal.map { signal in
            SymbolicatedCrash.Signal(
                name: signal.name.isEmpty ? nil : signal.name, number: Int(signal.number), code: Int(signal.code),
                address: signal.address.description)
        }
        // Only the modules that left a frame raw (or without lines) are named: one whose frames the crashed device
        // resolved needs no debug file here.
        let frames = threads.flatMap { $0.frames + ($0.asyncFrames ?? []) }
        let raw = Set(frames.filter(\.symbols.isEmpty).compactMap(\.module))
        let lineless = frames.filter { !$0.symbols.isEmpty && $0.symbols.allSatisfy { $0.sourceLocation == nil } }
        let withoutLines = raw.union(lineless.compactMap(\.module))
        return SymbolicatedCrash(
            reason: description.summary, reasonSource: description.source, signal: signal,
            mechanism: description.mechanism, handled: exception.handled,
            executable: exception.executable, complete: exception.complete, threads: threads,
            unsymbolicatedModules: missing.filter { raw.contains($0.path) },
            modulesWithoutDebugInfo: withoutDebugInfo.filter { withoutLines.contains($0.path) })
    }

    /// One frame looked up by its kind; the device's symbols stand where nothing here resolves it.
    static func frame(
        index: Int, _ stackFrame: CapturedException.StackFrame, _ symbolicator: ImageSymbolicator, _ code: AppCode
    ) -> SymbolicatedCrash.Frame {
        let address = stackFrame.frame.address.value
        let lookup = symbolicator.symbolicate(stackFrame.frame)
        let image = lookup.imageIndex.map { symbolicator.images[$0] }
        var symbols = (lookup.result?.frames ?? []).map { frame in
            FrameSymbol(
                function: frame.function, rawFunction: frame.rawFunction, file: frame.file, line: frame.line,
                column: frame.column, inlined: frame.isInlined, symbolOffset: frame.symbolOffset)
        }
        let inApp = stackFrame.inApp(namedBy: symbols, code: code)
        if symbols.isEmpty { symbols = stackFrame.symbols }
        return SymbolicatedCrash.Frame(
            index: index, instructionAddr: hex(address), module: image?.path, imageAddr: image.map { hex($0.base) },
            fileAddress: lookup.fileAddress.map(hex), kind: stackFrame.frame.kind.wireName, symbols: symbols,
            inApp: inApp)
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}

extension LoadedImage {
    /// An image of a captured exception (its build id from hex; none when empty or not hex).
    public init(image: CapturedException.Image) {
        self.init(
            path: image.path, base: image.base, size: image.size,
            buildId: image.buildId.isEmpty ? nil : DebugId.buildId(hex: image.buildId))
    }
}

extension ImageSymbolicator {
    /// Looks up `frame` by its kind: a return address at address − 1, an exact PC or async resume point as is.
    public func symbolicate(_ frame: Frame) -> Lookup {
        symbolicate(frame.address.value, isReturnAddress: frame.isReturnAddress)
    }
}
