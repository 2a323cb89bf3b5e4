import CohorlySymbols

/// Source-level frames for a report's threads, made on the device when the report becomes an event.
public struct ReportSymbols: Sendable, Equatable {
    /// Per thread of the report's ``CrashReport/allThreads`` (the crashed one first): per frame (innermost
    /// first, as in the report), its source-level frames with the inlined calls first and the physical
    /// function last (empty when nothing matched the address); nil for a thread left raw.
    public var threads: [[[SymbolicatedFrame]]?]
    /// Modules with frames whose binary or debug file was not found here (their frames stay raw), with why.
    public var unresolvedModules: [String: String]

    /// Frames as given.
    public init(threads: [[[SymbolicatedFrame]]?], unresolvedModules: [String: String] = [:]) {
        self.threads = threads
        self.unresolvedModules = unresolvedModules
    }
}

extension ExceptionEvent {
    /// Symbolicates `report` on this machine: the crashed thread whole, then the other threads while
    /// ``ExceptionEventOptions/symbolicationBudget`` lasts. Each module is read from the crashed launch's
    /// binary when its build id still matches, else from its debug file (`.gnu_debuglink` next to it or under
    /// the debug roots, `.build-id/xx/rest.debug` under the debug roots); no network. Never fails: what cannot
    /// be read stays raw. Runs on the calling thread (CohorlyCrash calls it on its delivery thread).
    public static func symbolicate(_ report: CrashReport, options: ExceptionEventOptions = .default) -> ReportSymbols {
        let images = report.modules.map { module in
            LoadedImage(
                path: module.path, base: module.base.value, size: module.size.value,
                buildId: DebugId.buildId(hex: module.buildId))
        }
        let locator = DebugFileLocator(searchPaths: [], debugRoots: options.debugRoots, debuginfod: nil)
        let symbolicator = ImageSymbolicator(images: images, locator: locator)
        let clock = ContinuousClock()
        var deadline: ContinuousClock.Instant?
        var threads: [[[SymbolicatedFrame]]?] = []
        for thread in report.allThreads {
            if let deadline, clock.now > deadline {
                threads.append(nil)
                continue
            }
            threads.append(
                thread.frames.enumerated().map { index, address in
                    // Frame 0 is the exact PC; the others are return addresses (looked up at address - 1).
                    symbolicator.symbolicate(address.value, isReturnAddress: index > 0).result?.frames ?? []
                })
            if deadline == nil { deadline = clock.now + options.symbolicationBudget }
        }
        var unresolved: [String: String] = [:]
        for failure in symbolicator.failures { unresolved[failure.image.path] = failure.error.description }
        return ReportSymbols(threads: threads, unresolvedModules: unresolved)
    }
}
