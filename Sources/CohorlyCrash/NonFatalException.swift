import Cohorly
import CohorlySymbols
import Foundation

/// A non-fatal `$exception` taken from this running process — a handled error, a hang — and made into its event
/// exactly as a crash report is: the same native frames, module and in-app rules, on-device symbols, debug
/// images and size cap (``ExceptionBuilder``), so that an error and a crash at the same place look alike and
/// group alike. ``NonFatalExceptionReporter`` fills in the modules and symbols off the caller's thread and queues
/// the event at once.
///
/// The subject thread (the one that caught the error, or the hung one) is the ``CrashReport/Thread/crashed``
/// one and goes into the event's exception list; the other threads go into `$exception_threads`, trimmed to fit.
public struct NonFatalException: Sendable {
    /// How the exception was caught: the `mechanism` of its entry in the event's exception list.
    public struct Mechanism: Sendable, Equatable {
        /// `generic` for a handled error, `hang` for a hang.
        public var type: String
        /// Whether the app handled it (true for a handled error).
        public var handled: Bool
        /// Whether there was no error value, only a message (default false).
        public var synthetic: Bool
        /// More fields, sent under `mechanism.meta` (PostHog keeps only its known keys; put what a query needs
        /// into ``NonFatalException/properties`` too). Default none.
        public var meta: Properties

        /// A mechanism of `type`.
        public init(type: String, handled: Bool, synthetic: Bool = false, meta: Properties = [:]) {
            self.type = type
            self.handled = handled
            self.synthetic = synthetic
            self.meta = meta
        }
    }

    /// The exception's type, as PostHog groups it (with the in-app frames): an error's type name.
    public var type: String
    /// Its details: an error's description.
    public var value: String
    /// `$exception_level` (default `error`).
    public var level: String
    /// How it was caught.
    public var mechanism: Mechanism
    /// `$issue_name`, when the type and value do not say it well (default nil).
    public var issueName: String?
    /// The captured threads, innermost frame first, each frame with its kind (a thread interrupted by a signal
    /// starts with its exact PC; one that captured itself by a call has return addresses only); the subject
    /// thread has `crashed: true` (else the first is the subject).
    public var threads: [CrashReport.Thread]
    /// The loaded modules the frames point into (default empty: the reporter lists the live ones).
    public var modules: [CrashReport.Module]
    /// The executable's path (for the in-app rule; default: this process's).
    public var executable: String
    /// Extra event properties (a hang's duration, the app's own); the `$exception…` keys the event is made of win.
    public var properties: Properties
    /// The event's `time`, unix milliseconds (default: now).
    public var timestampMs: Int64
    /// The event's `$insert_id` (default: empty, which means a fresh UUID made when the event is built — off the
    /// caller's thread when sent through ``NonFatalExceptionReporter``).
    public var insertId: String
    /// The breadcrumbs of the moment of the capture (``NonFatalExceptionReporter/submit(_:options:ticket:)`` takes
    /// them): sent as `$exception_breadcrumbs`.
    var breadcrumbs: BreadcrumbSnapshot?
    /// The index in ``threads`` of the catching thread's stack when the subject thread holds a captured error's
    /// throw site (``CapturedException/Thread/catchSite``).
    var catchSiteIndex: Int?

    /// An exception with these parts.
    public init(
        type: String, value: String, level: String = "error", mechanism: Mechanism, issueName: String? = nil,
        threads: [CrashReport.Thread], modules: [CrashReport.Module] = [],
        executable: String? = nil, properties: Properties = [:], timestampMs: Int64? = nil, insertId: String? = nil
    ) {
        self.type = type
        self.value = value
        self.level = level
        self.mechanism = mechanism
        self.issueName = issueName
        self.threads = threads
        self.modules = modules
        self.executable = executable ?? LiveStack.executablePath
        self.properties = properties
        self.timestampMs = timestampMs ?? Int64(Date().timeIntervalSince1970 * 1000)
        self.insertId = insertId ?? ""
    }

    /// The index in ``threads`` of the subject thread.
    var subjectIndex: Int? { threads.firstIndex(where: \.crashed) ?? (threads.isEmpty ? nil : 0) }

    /// The event: level, type, value and mechanism, the subject thread in the exception list, the others in
    /// `$exception_threads` as far as ``ExceptionEventOptions/maxEventBytes`` allows, `$debug_images` for the
    /// frames. `symbols` follow ``threads`` (``symbolicate(with:options:)``); without them every frame is raw.
    public func event(symbols: [[[SymbolicatedFrame]]?]? = nil, options: ExceptionEventOptions = .default)
        -> PreparedEvent
    {
        record(symbols: symbols, options: options).event
    }

    /// The exception record (what the queue holds, each destination renders): ``exception(symbols:options:)``
    /// as ``ExceptionBuilder/record(_:options:)`` queues it (its event has no `$exception_threads` when only the
    /// subject thread was captured).
    public func record(
        symbols: [[[SymbolicatedFrame]]?]? = nil, options: ExceptionEventOptions = .default, sourceRoot: String? = nil
    ) -> QueuedException {
        ExceptionBuilder.record(exception(symbols: symbols, options: options, sourceRoot: sourceRoot), options: options)
    }

    /// The exception in the crash model (what ``event(symbols:options:)`` renders): the threads with their
    /// kinds, in-app flags (``ExceptionEventOptions/inApp``) and `symbols`, the modules as images.
    /// `sourceRoot` is the program's root package directory (``ImageSymbolicator/sourceRoot(ofImageAt:)`` of
    /// ``executable``; nil: unknown), which the in-app rule reads.
    public func exception(
        symbols: [[[SymbolicatedFrame]]?]? = nil, options: ExceptionEventOptions = .default, sourceRoot: String? = nil
    ) -> CapturedException {
        let description = CrashDescription(
            type: type, value: value, mechanism: mechanism.type, issueName: issueName)
        var exception = CapturedException(
            description: description, facts: CrashReason.Facts(given: description), level: level,
            handled: mechanism.handled)
        exception.synthetic = mechanism.synthetic
        exception.mechanismMeta = mechanism.meta
        exception.images = modules.map(CapturedException.Image.init(module:))
        exception.timestampMs = timestampMs
        exception.insertId = insertId
        exception.breadcrumbs = breadcrumbs?.breadcrumbs ?? []
        exception.properties = properties
        let inApp = modules.map { options.inApp.isInApp(path: $0.path, executable: executable) }
        let code = options.inApp.appCode(sourceRoot: sourceRoot)
        let subject = subjectIndex
        exception.threads = threads.enumerated().map { index, thread in
            var captured = CapturedException.Thread(report: thread)
            captured.crashed = index == subject
            captured.catchSite = index == catchSiteIndex
            if let found = symbols.flatMap({ index < $0.count ? $0[index] : nil }) {
                captured.setSymbols(found.map { $0.map(FrameSymbol.init(symbolicated:)) })
            }
            captured.markInApp(code: code) { address in
                exception.imageIndex(containing: address).map { inApp[$0] } ?? false
            }
            return captured
        }
        // The subject first, the others in their order.
        exception.threads = exception.threads.filter(\.crashed) + exception.threads.filter { !$0.crashed }
        return exception
    }

    /// Symbolicates the threads with `symbolicator` (one per set of modules, reused across events): the subject
    /// thread whole, the others while ``ExceptionEventOptions/symbolicationBudget`` lasts. Follows ``threads``.
    func symbolicate(with symbolicator: ImageSymbolicator, options: ExceptionEventOptions) -> [[[SymbolicatedFrame]]?] {
        // The subject thread first, so the budget never cuts it.
        let order = (subjectIndex.map { [$0] } ?? []) + threads.indices.filter { $0 != subjectIndex }
        let found = ExceptionBuilder.symbolicate(
            order.map { threads[$0].frames + (threads[$0].async?.frames ?? []) }, with: symbolicator,
            budget: options.symbolicationBudget)
        var result = [[[SymbolicatedFrame]]?](repeating: nil, count: threads.count)
        for (position, index) in order.enumerated() { result[index] = found[position] }
        return result
    }
}
