import Cohorly
import CohorlySymbols
import Dispatch

/// Makes ``NonFatalException``s into events and queues them, on one serial background queue per process, so the
/// thread that captured the exception pays only for the capture: the module list, the symbols and the event's
/// JSON are made here. The event goes through the ticket reserved at the capture (``Cohorly/reserveLiveEvent()``),
/// so it carries the time, identity and super properties of the capture, and a `flush()` made after the capture
/// waits for it.
///
/// Modules are listed again only when a library was loaded or unloaded; the symbolicator (the debug files it
/// opened, their address indexes) is kept while exceptions keep coming and released after
/// ``symbolicatorIdleTime`` without one, so a quiet app holds no symbol memory.
final class NonFatalExceptionReporter: Sendable {
    /// The process's reporter.
    static let shared = NonFatalExceptionReporter()

    /// How long the symbolicator is kept after the last exception.
    static let symbolicatorIdleTime: DispatchTimeInterval = .seconds(30)

    private let queue = DispatchQueue(label: "cohorly.live-exceptions", qos: .utility)
    private let worker = Worker()

    /// Sends `exception` through `cohorly` now: reserves the event (stamped with this moment's time, distinct
    /// id and super properties; ``NonFatalException/timestampMs`` is set to it) and hands it to
    /// ``submit(_:options:ticket:)``. Returns false, doing nothing, when the user opted out. `options` default to the
    /// client's: `install`'s ``CohorlyCrash/Options/events`` (or ``HandledErrorOptions/events`` when set), else the
    /// defaults.
    @discardableResult
    func send(_ exception: NonFatalException, to cohorly: Cohorly, options: ExceptionEventOptions? = nil) -> Bool {
        guard let ticket = cohorly.reserveLiveEvent() else { return false }
        var exception = exception
        exception.timestampMs = ticket.time
        submit(exception, options: options ?? HandledErrors.eventOptions(for: cohorly), ticket: ticket)
        return true
    }

    /// Fills in the modules (the live ones when `exception` has none) and the symbols (unless `options` say
    /// not to), makes the event and fulfils `ticket` with it, off the caller's thread, in submission order.
    /// The event carries the release and dist of the running launch — the ones its crash would carry (the
    /// recorder's crash-time context, set by ``CohorlyCrash/install(cohorly:release:dist:version:options:)``) —
    /// unless the exception's properties set their own.
    func submit(_ exception: NonFatalException, options: ExceptionEventOptions, ticket: LiveEventTicket) {
        // The breadcrumbs of this moment, copied on the caller's thread (values are made on the queue).
        var exception = exception
        if exception.breadcrumbs == nil { exception.breadcrumbs = BreadcrumbRecorder.snapshot() }
        Self.addRelease(CrashRecorder.context, to: &exception.properties)
        queue.async { [worker, queue, exception] in
            let event = worker.event(for: exception, options: options)
            ticket.fulfill(event)
            let mark = worker.finishedOne()
            queue.asyncAfter(deadline: .now() + Self.symbolicatorIdleTime) { worker.releaseIfIdle(since: mark) }
        }
    }

    /// `release` and `dist` of `context` into `properties`, where they are not set already.
    static func addRelease(_ context: CrashContext, to properties: inout Properties) {
        if properties["release"] == nil, let release = context.release { properties["release"] = .string(release) }
        if properties["dist"] == nil, let dist = context.dist { properties["dist"] = .string(dist) }
    }

    /// The state of the queue: touched only from it.
    private final class Worker: @unchecked Sendable {
        private var generation: UInt64?
        private var modules: [CrashReport.Module] = []
        private var symbolicator: (debugRoots: [String], value: ImageSymbolicator)?
        private var finished = 0

        func event(for exception: NonFatalException, options: ExceptionEventOptions) -> QueuedException {
            var exception = exception
            let live = exception.modules.isEmpty
            if live { exception.modules = currentModules() }
            guard options.symbolicate else { return exception.record(options: options) }
            let symbolicator =
                live
                ? cachedSymbolicator(options)
                : ExceptionBuilder.makeSymbolicator(modules: exception.modules, options: options)
            return exception.record(
                symbols: exception.symbolicate(with: symbolicator, options: options), options: options,
                sourceRoot: symbolicator.sourceRoot(ofImageAt: exception.executable))
        }

        /// The live modules, listed again when the loader's counters moved (the symbolicator goes with them).
        private func currentModules() -> [CrashReport.Module] {
            let now = LiveStack.modulesGeneration
            if now != generation {
                modules = LiveStack.modules()
                generation = now
                symbolicator = nil
            }
            return modules
        }

        private func cachedSymbolicator(_ options: ExceptionEventOptions) -> ImageSymbolicator {
            if let symbolicator, symbolicator.debugRoots == options.debugRoots { return symbolicator.value }
            let made = ExceptionBuilder.makeSymbolicator(modules: modules, options: options)
            symbolicator = (options.debugRoots, made)
            return made
        }

        func finishedOne() -> Int {
            finished += 1
            return finished
        }

        func releaseIfIdle(since mark: Int) {
            if finished == mark { symbolicator = nil }
        }
    }
}
