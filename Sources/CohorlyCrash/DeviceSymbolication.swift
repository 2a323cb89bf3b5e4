import CohorlySymbols

/// Source-level frames for a report's threads, made on the device when the report becomes an event.
public struct ReportSymbols: Sendable, Equatable {
    /// Per thread of the report's ``CrashReport/allThreads`` (the crashed one first): per frame (the physical
    /// frames innermost first, as in the report, then the async frames), its source-level frames with the inlined calls first and the physical
    /// function last (empty when nothing matched the address); nil for a thread left raw.
    public var threads: [[[SymbolicatedFrame]]?]
    /// Modules with frames whose binary or debug file was not found here (their frames stay raw), with why.
    public var unresolvedModules: [String: String]
    /// The crashed program's root package directory, from its executable's DWARF (for ``AppCode``); nil when
    /// unknown.
    public var sourceRoot: String?

    /// Frames as given.
    public init(
        threads: [[[SymbolicatedFrame]]?], unresolvedModules: [String: String] = [:], sourceRoot: String? = nil
    ) {
        self.threads = threads
        self.unresolvedModules = unresolvedModules
        self.sourceRoot = sourceRoot
    }
}

extension ExceptionBuilder {
    /// Symbolicates `report` on this machine: the crashed thread whole, then the other threads while
    /// ``ExceptionEventOptions/symbolicationBudget`` lasts. Each module is read from the crashed launch's
    /// binary when its build id still matches, else from its debug file (`.gnu_debuglink` next to it or under
    /// the debug roots, `.build-id/xx/rest.debug` under the debug roots); no network. Never fails: what cannot
    /// be read stays raw. Runs on the calling thread (CohorlyCrash calls it on its delivery thread).
    public static func symbolicate(_ report: CrashReport, options: ExceptionEventOptions = .default) -> ReportSymbols {
        let symbolicator = makeSymbolicator(modules: report.modules, options: options)
        let threads = symbolicate(
            report.allThreads.map { $0.frames + ($0.async?.frames ?? []) }, with: symbolicator,
            budget: options.symbolicationBudget)
        return ReportSymbols(
            threads: threads, unresolvedModules: unresolvedModules(of: symbolicator),
            sourceRoot: symbolicator.sourceRoot(ofImageAt: report.executable))
    }

    /// A symbolicator for `modules`: each read from its binary while the build id matches, else from its debug
    /// file (`.gnu_debuglink`, `.build-id` under ``ExceptionEventOptions/debugRoots``); no network.
    static func makeSymbolicator(modules: [CrashReport.Module], options: ExceptionEventOptions) -> ImageSymbolicator {
        makeSymbolicator(images: modules.map(CapturedException.Image.init(module:)), options: options)
    }

    /// A symbolicator for `images` (see the modules variant).
    static func makeSymbolicator(images: [CapturedException.Image], options: ExceptionEventOptions)
        -> ImageSymbolicator
    {
        let locator = DebugFileLocator(searchPaths: [], debugRoots: options.debugRoots, debuginfod: nil)
        return ImageSymbolicator(images: images.map(LoadedImage.init(image:)), locator: locator)
    }

    /// Per thread (innermost frame first), the source-level frames of each address: the first thread whole,
    /// the others while `budget` lasts once it is done (nil after). Each frame is looked up by its kind (only a
    /// return address one byte back).
    static func symbolicate(_ threads: [[Frame]], with symbolicator: ImageSymbolicator, budget: Duration)
        -> [[[SymbolicatedFrame]]?]
    {
        let clock = ContinuousClock()
        var deadline: ContinuousClock.Instant?
        var result: [[[SymbolicatedFrame]]?] = []
        for frames in threads {
            if let deadline, clock.now > deadline {
                result.append(nil)
                continue
            }
            result.append(
                frames.map { symbolicator.symbolicate($0).result?.frames ?? [] })
            if deadline == nil { deadline = clock.now + budget }
        }
        return result
    }

    /// Modules whose frames stay raw (binary or debug file not found), with why.
    static func unresolvedModules(of symbolicator: ImageSymbolicator) -> [String: String] {
        var unresolved: [String: String] = [:]
        for failure in symbolicator.failures { unresolved[failure.image.path] = failure.error.description }
        return unresolved
    }
}
