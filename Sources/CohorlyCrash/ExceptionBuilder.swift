import Cohorly
import CohorlySymbols
import Foundation

/// Builds exceptions along the crash pipeline: a crash report, a hang, an abnormal exit into the crash model's
/// ``CapturedException`` (a handled error or a live hang comes as a ``NonFatalException``, which uses these
/// builders too); the model into the ``QueuedException`` the queue holds; and that into the `$exception` event for
/// PostHog and Cohorly, whose shape only this type knows.
///
/// One event shape for both destinations: the one PostHog error tracking (`cymbal`) reads — native frames
/// (`platform: "native"`, `instruction_addr`, `image_addr`, `module` = the image's file name, `in_app`, and
/// `function`/`filename`/`lineno` when symbolicated on the device), oldest first with the crash site last,
/// inlined calls as `inline: true` frames after their physical frame, each physical frame's kind under
/// ``CapturedException/frameKindKey`` (so no server re-guesses which address is a return address), the async
/// callers after the frame they continue from, and `$debug_images` for the images the frames reference, so a
/// server holding the debug files can resolve what the device could not. Everything about the launch comes
/// from the report (the launch that crashed), never from the launch that sends it.
public enum ExceptionBuilder {
    /// The event name.
    public static let name = "$exception"

    /// The event for `report`: fatal level, the report's `$insert_id` and crash time, its context (including
    /// the super properties registered at crash time), the crashed thread whole and the other threads as far
    /// as ``ExceptionEventOptions/maxEventBytes`` allows. `symbols` are the frames made on the device
    /// (``symbolicate(_:options:)``); without them every frame is raw.
    public static func make(
        from report: CrashReport, symbols: ReportSymbols? = nil, options: ExceptionEventOptions = .default
    ) -> PreparedEvent {
        record(from: report, symbols: symbols, options: options).event
    }

    /// The queued exception (what the queue holds, each destination renders) for `report`: ``exception(from:
    /// symbols:options:)`` laid out by ``record(_:options:)``.
    public static func record(
        from report: CrashReport, symbols: ReportSymbols? = nil, options: ExceptionEventOptions = .default
    ) -> QueuedException {
        record(exception(from: report, symbols: symbols, options: options), options: options)
    }

    /// The crash of `report` as the crash model's exception: the reason (a release trap's named by the device's
    /// crash-site symbols), every thread with its kinds, in-app flags (``ExceptionEventOptions/inApp``) and the
    /// device's symbols, the crash-time context and the report's own facts as properties.
    public static func exception(
        from report: CrashReport, symbols: ReportSymbols? = nil, options: ExceptionEventOptions = .default
    ) -> CapturedException {
        // `symbols` follows `report.allThreads`: the crashed thread first when the report has one.
        let crashSite = report.crashedThread == nil ? nil : symbols?.threads.first??.first
        var exception = CapturedException(report: report, crashSite: crashSite?.map(\.function) ?? [])
        let inApp = report.modules.map { options.inApp.isInApp(path: $0.path, executable: report.executable) }
        let code = options.inApp.appCode(sourceRoot: symbols?.sourceRoot)
        exception.threads = exception.threads.enumerated().map { index, thread in
            var thread = thread
            if let found = symbols.flatMap({ index < $0.threads.count ? $0.threads[index] : nil }) {
                thread.setSymbols(found.map { $0.map(FrameSymbol.init(symbolicated:)) })
            }
            thread.markInApp(code: code) { address in
                exception.imageIndex(containing: address).map { inApp[$0] } ?? false
            }
            return thread
        }
        var properties = contextProperties(report)
        if let hang = report.hang { properties.merge(hangProperties(hang)) { _, hang in hang } }
        properties["$exception_pid"] = .int(Int(report.pid))
        if report.stackOverflow { properties["$exception_stack_overflow"] = true }
        if let captureNs = report.captureNs { properties["$exception_capture_ns"] = .int(Int(clamping: captureNs)) }
        CapturedException.taskProperties(task: report.task, context: report.taskContext, into: &properties)
        exception.properties = properties
        return exception
    }

    /// The `$exception` event of `exception` (``record(_:options:)`` rendered).
    public static func render(_ exception: CapturedException, options: ExceptionEventOptions = .default)
        -> PreparedEvent
    {
        record(exception, options: options).event
    }

    /// `exception` as the queue's record: given an `$insert_id` when it has none, cut to
    /// ``ExceptionEventOptions/maxEventBytes`` (``CapturedException/fitted(toEventBytes:)``: the other threads
    /// trimmed, then dropped; the subject thread whole).
    public static func record(_ exception: CapturedException, options: ExceptionEventOptions = .default)
        -> QueuedException
    {
        var exception = exception
        if exception.insertId.isEmpty { exception.insertId = UUID().uuidString.lowercased() }
        return QueuedException(exception.fitted(toEventBytes: options.maxEventBytes))
    }

    /// The report's crash-time context as event properties: the device fields and release, then the super
    /// properties registered at crash time (they win over the device fields, as on every other event), then
    /// the free-form crash properties where nothing else set the key.
    static func contextProperties(_ report: CrashReport) -> Properties { contextProperties(report.context) }

    /// A crash-time context (``CrashContext``, serialized) as event properties; see the report variant.
    static func contextProperties(_ context: [String: CohorlyValue]) -> Properties {
        var properties: Properties = [:]
        let nested: Set = [CrashContext.propertiesKey, CrashContext.superPropertiesKey]
        for (key, value) in context where !nested.contains(key) { properties[key] = value }
        if case .object(let registered)? = context[CrashContext.superPropertiesKey] {
            for (key, value) in registered where key != "distinct_id" { properties[key] = value }
        }
        if case .object(let extra)? = context[CrashContext.propertiesKey] {
            for (key, value) in extra where properties[key] == nil { properties[key] = value }
        }
        return properties
    }

    /// The first 16 bytes of the build id as a GUID with the first three fields byte-swapped (Sentry's rule),
    /// e.g. `02547a30…` → `307a5402-…`; empty without a build id (``CapturedException/Image/debugId``).
    public static func debugId(fromBuildId buildId: String) -> String {
        CapturedException.Image(path: "", base: 0, size: 0, buildId: buildId).debugId
    }
}

extension FrameSymbol {
    /// A symbolicator's frame in the crash model, with its short name (``Demangler/shortName(function:rawFunction:)``:
    /// what the wires show as the frame's `function`).
    init(symbolicated frame: SymbolicatedFrame) {
        self.init(
            function: frame.function, rawFunction: frame.rawFunction, file: frame.file, line: frame.line,
            column: frame.column, inlined: frame.isInlined, symbolOffset: frame.symbolOffset,
            shortFunction: Demangler.shortName(function: frame.function, rawFunction: frame.rawFunction))
    }
}

extension CapturedException.Thread {
    /// Sets every frame's in-app flag (physical and async): ``AppCode/isInApp(_:imageInApp:)`` of its symbols,
    /// with `imageInApp` the answer of the image holding its address. So the crash recorder's own frames (on top
    /// of an uncaught C++ exception's stack), compiler thunks, C start-up code and the packages linked into the
    /// executable beside the app are neither the culprit nor part of the key on any backend; a frame
    /// left raw keeps its image's answer.
    mutating func markInApp(code: AppCode, _ imageInApp: (UInt64) -> Bool) {
        func inApp(_ frame: CapturedException.StackFrame) -> Bool {
            code.isInApp(frame.symbols, imageInApp: imageInApp(frame.frame.address.value))
        }
        for index in frames.indices { frames[index].inApp = inApp(frames[index]) }
        guard var chain = async else { return }
        for index in chain.frames.indices { chain.frames[index].inApp = inApp(chain.frames[index]) }
        async = chain
    }
}
