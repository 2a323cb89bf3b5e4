import CohorlyCrashModel

/// Turns a ``CapturedException`` (a report's crash, a stored `$exception` event) into a ``SymbolicatedCrash``
/// with one ``ImageSymbolicator`` (each module's index is built once and reused for every address). Every frame
/// is looked up by its kind: only a return address one byte back.
public enum CrashSymbolicator {
    /// Symbolicates every thread of `exception` (physical and async frames), finding debug files with `locator`:
    /// the same exception, threads crashed first, each frame with the symbols found here, its ``FrameLookup`` and
    /// its in-app answer. Where nothing here resolves an address, the symbols the crashed device resolved stand.
    /// The reason is decided again with the crash site found here (``CrashReason/describe(_:crashSite:)``).
    public static func symbolicate(_ exception: CapturedException, locator: DebugFileLocator) -> SymbolicatedCrash {
        let symbolicator = ImageSymbolicator(images: exception.images.map(LoadedImage.init(image:)), locator: locator)
        var symbolicated = exception
        // Frames named here are in-app as the device decides (AppCode, the root from the executable's DWARF).
        let code = exception.appCode { symbolicator.sourceRoot(ofImageAt: $0.path) }
        symbolicated.threads = (exception.threads.filter(\.crashed) + exception.threads.filter { !$0.crashed }).map {
            var thread = $0
            thread.frames = thread.frames.map { frame($0, symbolicator, code) }
            if let chain = thread.async {
                thread.async?.frames = chain.frames.map { frame($0, symbolicator, code) }
            }
            return thread
        }
        let crashSite = symbolicated.threads.first(where: \.crashed)?.frames.first?.symbols.map(\.function) ?? []
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
        // Only the modules that left a frame raw (or without lines) are named: one whose frames the crashed device
        // resolved needs no debug file here.
        let frames = symbolicated.threads.flatMap { $0.frames + ($0.async?.frames ?? []) }
        let raw = Set(frames.filter(\.symbols.isEmpty).compactMap(\.lookup?.imagePath))
        let lineless = frames.filter { !$0.symbols.isEmpty && $0.symbols.allSatisfy { $0.sourceLocation == nil } }
        let withoutLines = raw.union(lineless.compactMap(\.lookup?.imagePath))
        return SymbolicatedCrash(
            exception: symbolicated, reason: description.summary, reasonSource: description.source,
            mechanism: description.mechanism, unsymbolicatedModules: missing.filter { raw.contains($0.path) },
            modulesWithoutDebugInfo: withoutDebugInfo.filter { withoutLines.contains($0.path) })
    }

    /// One frame looked up by its kind; the device's symbols stand where nothing here resolves it.
    static func frame(
        _ stackFrame: CapturedException.StackFrame, _ symbolicator: ImageSymbolicator, _ code: AppCode
    ) -> CapturedException.StackFrame {
        let lookup = symbolicator.symbolicate(stackFrame.frame)
        let image = lookup.imageIndex.map { symbolicator.images[$0] }
        var symbolicated = stackFrame
        symbolicated.symbols = (lookup.result?.frames ?? []).map { frame in
            FrameSymbol(
                function: frame.function, rawFunction: frame.rawFunction, file: frame.file, line: frame.line,
                column: frame.column, inlined: frame.isInlined, symbolOffset: frame.symbolOffset)
        }
        symbolicated.inApp = stackFrame.inApp(namedBy: symbolicated.symbols, code: code)
        if symbolicated.symbols.isEmpty { symbolicated.symbols = stackFrame.symbols }
        symbolicated.lookup = FrameLookup(
            imagePath: image?.path, imageBase: image?.base, fileAddress: lookup.fileAddress)
        return symbolicated
    }
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
