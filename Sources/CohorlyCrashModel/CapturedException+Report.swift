extension CapturedException {
    /// A crash report as an exception: level `fatal`, not handled, the reason decided from the report (and the
    /// function names at the crash site, when it was symbolicated), every thread with the kinds its report gave,
    /// the modules as images, the breadcrumbs. In-app flags, symbols and the crash-time properties are the
    /// event builder's to add.
    public init(report: CrashReport, crashSite: [String?] = []) {
        let facts = CrashReason.Facts(report: report)
        self.init(
            description: CrashReason.describe(facts, crashSite: crashSite), facts: facts, level: "fatal",
            handled: false)
        threads = report.allThreads.map(Thread.init(report:))
        images = report.modules.map(Image.init(module:))
        arch = report.context["$arch"]?.stringValue
        breadcrumbs = report.breadcrumbs ?? []
        breadcrumbsDropped = report.breadcrumbsDropped ?? 0
        timestampMs = Int64(clamping: report.timestampMs)
        insertId = report.insertId
        executable = report.executable.isEmpty ? nil : report.executable
        complete = report.complete
        if let hang = report.hang {
            mechanismMeta = [
                "hang": ["duration_ms": .int(Int(clamping: hang.durationMs)), "subject": .string(hang.subject)]
            ]
        } else {
            let signal = report.signal
            mechanismMeta = [
                "signal": [
                    "number": .int(Int(signal.number)), "name": .string(signal.name), "code": .int(Int(signal.code)),
                    "address": .string(signal.address.description),
                ]
            ]
        }
    }
}

extension CapturedException.Thread {
    /// A report's thread, raw: its frames and async chain with their kinds, nothing in-app yet.
    public init(report thread: CrashReport.Thread) {
        self.init(
            tid: thread.tid, name: thread.name, crashed: thread.crashed, truncated: thread.truncated,
            frames: thread.frames.map { CapturedException.StackFrame($0) },
            async: thread.async.map { chain in
                CapturedException.AsyncStack(
                    anchor: chain.anchor, stop: chain.stop,
                    frames: chain.frames.map { CapturedException.StackFrame($0) })
            })
    }

    /// Every frame of the thread: the physical ones, then the async ones (the order ``symbols`` lists follow).
    public var allFrames: [CapturedException.StackFrame] { frames + (async?.frames ?? []) }

    /// Sets the symbols of ``allFrames`` from `symbols` (same order; a shorter list leaves the rest as they are).
    public mutating func setSymbols(_ symbols: [[FrameSymbol]]) {
        for index in frames.indices where index < symbols.count { frames[index].symbols = symbols[index] }
        guard var chain = async else { return }
        for index in chain.frames.indices where frames.count + index < symbols.count {
            chain.frames[index].symbols = symbols[frames.count + index]
        }
        async = chain
    }
}

extension CapturedException.Image {
    /// A report's module.
    public init(module: CrashReport.Module) {
        self.init(path: module.path, base: module.base.value, size: module.size.value, buildId: module.buildId)
    }
}
