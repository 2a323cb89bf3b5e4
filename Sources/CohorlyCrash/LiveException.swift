import Cohorly
import CohorlySymbols
import Foundation

/// A non-fatal `$exception` taken from this running process — a handled error, a hang — and made into its event
/// exactly as a crash report is: the same native frames, module and in-app rules, on-device symbols, debug
/// images and size cap (``ExceptionEvent``), so that an error and a crash at the same place look alike and
/// group alike. ``LiveExceptionReporter`` fills in the modules and symbols off the caller's thread and queues
/// the event at once.
///
/// The subject thread (the one that caught the error, or the hung one) is the ``CrashReport/Thread/crashed``
/// one and goes into `$exception_list`; the other threads go into `$exception_threads`, trimmed to fit.
public struct LiveException: Sendable {
    /// How the exception was caught: the `mechanism` of its `$exception_list` entry.
    public struct Mechanism: Sendable, Equatable {
        /// `generic` for a handled error, `hang` for a hang.
        public var type: String
        /// Whether the app handled it (true for a handled error).
        public var handled: Bool
        /// Whether there was no error value, only a message (default false).
        public var synthetic: Bool
        /// More fields, sent under `mechanism.meta` (PostHog keeps only its known keys; put what a query needs
        /// into ``LiveException/properties`` too). Default none.
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
    /// The captured threads, innermost frame first; the subject thread has `crashed: true` (else the first is
    /// the subject).
    public var threads: [CrashReport.Thread]
    /// Whether each thread's frame 0 is an exact PC (a signal's context) rather than a return address (a stack
    /// taken with `getcontext`: every frame is a return address). Default false.
    public var firstFrameIsExact: Bool
    /// The loaded modules the frames point into (default empty: the reporter lists the live ones).
    public var modules: [CrashReport.Module]
    /// The executable's path (for the in-app rule; default: this process's).
    public var executable: String
    /// Extra event properties (a hang's duration, the app's own); the `$exception…` keys the event is made of win.
    public var properties: Properties
    /// The event's `time`, unix milliseconds (default: now).
    public var timestampMs: Int64
    /// The event's `$insert_id` (default: empty, which means a fresh UUID made when the event is built — off the
    /// caller's thread when sent through ``LiveExceptionReporter``).
    public var insertId: String
    /// The breadcrumbs of the moment of the capture (``LiveExceptionReporter/submit(_:options:ticket:)`` takes them):
    /// sent as `$exception_breadcrumbs`.
    var breadcrumbs: BreadcrumbSnapshot?

    /// An exception with these parts.
    public init(
        type: String, value: String, level: String = "error", mechanism: Mechanism, issueName: String? = nil,
        threads: [CrashReport.Thread], firstFrameIsExact: Bool = false, modules: [CrashReport.Module] = [],
        executable: String? = nil, properties: Properties = [:], timestampMs: Int64? = nil, insertId: String? = nil
    ) {
        self.type = type
        self.value = value
        self.level = level
        self.mechanism = mechanism
        self.issueName = issueName
        self.threads = threads
        self.firstFrameIsExact = firstFrameIsExact
        self.modules = modules
        self.executable = executable ?? LiveStack.executablePath
        self.properties = properties
        self.timestampMs = timestampMs ?? Int64(Date().timeIntervalSince1970 * 1000)
        self.insertId = insertId ?? ""
    }

    /// The index in ``threads`` of the subject thread.
    var subjectIndex: Int? { threads.firstIndex(where: \.crashed) ?? (threads.isEmpty ? nil : 0) }

    /// The event (``record(symbols:options:)`` as the `$exception` event).
    public func event(symbols: [[[SymbolicatedFrame]]?]? = nil, options: ExceptionEventOptions = .default)
        -> PreparedEvent
    {
        record(symbols: symbols, options: options).event
    }

    /// The exception record: level, type, value and mechanism, the subject thread's stack, the other threads as
    /// far as ``ExceptionEventOptions/maxEventBytes`` allows, the images of the frames. `symbols` follow
    /// ``threads`` (``symbolicate(with:options:)``); without them every frame is raw.
    public func record(symbols: [[[SymbolicatedFrame]]?]? = nil, options: ExceptionEventOptions = .default)
        -> ExceptionRecord
    {
        let layout = ExceptionEvent.FrameLayout(
            modules: modules, executable: executable, arch: nil, rules: options.inApp)
        func symbolsOf(_ index: Int) -> [[SymbolicatedFrame]]? {
            symbols.flatMap { index < $0.count ? $0[index] : nil }
        }
        let subject = subjectIndex
        let subjectFrames = subject.map { layout.frames(of: threads[$0], symbols: symbolsOf($0)) } ?? []
        var properties = self.properties
        if let subject, !threads[subject].name.isEmpty {
            properties["$exception_thread_name"] = .string(threads[subject].name)
        }
        var record = ExceptionRecord(
            insertId: insertId.isEmpty ? UUID().uuidString.lowercased() : insertId, timestampMs: timestampMs,
            level: level, issueName: issueName,
            exceptions: [
                ExceptionRecord.Exception(
                    type: type, value: value,
                    mechanism: ExceptionRecord.Mechanism(
                        type: mechanism.type, handled: mechanism.handled, synthetic: mechanism.synthetic,
                        meta: mechanism.meta), threadId: subject.map { threads[$0].tid } ?? 0,
                    frames: subjectFrames.flatMap { $0 })
            ], properties: properties)
        ExceptionEvent.addBreadcrumbs(breadcrumbs, to: &record)
        let others = threads.indices.filter { $0 != subject }.map { index in
            ExceptionEvent.OtherThread(
                tid: threads[index].tid, name: threads[index].name,
                groups: layout.frames(of: threads[index], symbols: symbolsOf(index)))
        }
        ExceptionEvent.fit(
            others, crashed: subjectFrames, into: &record, layout: layout, limit: options.maxEventBytes)
        if others.isEmpty { record.threads = nil }
        return record
    }

    /// Symbolicates the threads with `symbolicator` (one per set of modules, reused across events): the subject
    /// thread whole, the others while ``ExceptionEventOptions/symbolicationBudget`` lasts. Follows ``threads``.
    func symbolicate(with symbolicator: ImageSymbolicator, options: ExceptionEventOptions) -> [[[SymbolicatedFrame]]?] {
        // The subject thread first, so the budget never cuts it.
        let order = (subjectIndex.map { [$0] } ?? []) + threads.indices.filter { $0 != subjectIndex }
        let found = ExceptionEvent.symbolicate(
            order.map { threads[$0].frames }, firstFrameIsExact: firstFrameIsExact, with: symbolicator,
            budget: options.symbolicationBudget)
        var result = [[[SymbolicatedFrame]]?](repeating: nil, count: threads.count)
        for (position, index) in order.enumerated() { result[index] = found[position] }
        return result
    }
}
