/// One crash report (docs/report-format.md): what the recorder's handler, the hang watchdog or the salvager
/// wrote, read from format v1 or v2 and written as v2.
///
/// The header fields are required; the later sections are optional because a report salvaged from a torn
/// file (``complete`` false) may end before them.
public struct CrashReport: Sendable, Equatable {
    /// The format tag the file carried (``CrashReportFormat``).
    public var format: String
    /// The `$insert_id` made before the crash (a UUIDv4; stable across resends).
    public var insertId: String
    /// Crash time, unix milliseconds.
    public var timestampMs: UInt64
    /// The crashed process.
    public var pid: Int32
    /// Path of the crashed executable.
    public var executable: String
    /// How the crash was caught.
    public var mechanism: Mechanism
    /// The signal (for a C++ terminate: SIGABRT, which follows it).
    public var signal: Signal
    /// The Swift fatal-error message, when the runtime left one.
    public var message: String?
    /// The uncaught C++ exception, for ``Mechanism/cxxTerminate``.
    public var cxx: CxxException?
    /// Whether the fault looks like a stack overflow (SIGSEGV just below the stack pointer).
    public var stackOverflow: Bool
    /// The thread that crashed (nil only in a salvaged report cut before it).
    public var crashedThread: Thread?
    /// The crash-time context (release, distinct id, device…), as the app set it.
    public var context: [String: CohorlyValue]
    /// The other threads (at most 19).
    public var threads: [Thread]
    /// The loaded modules.
    public var modules: [Module]
    /// Threads asked to record their stacks, and how many did in time.
    public var threadsRequested: Int?
    /// See ``threadsRequested``.
    public var threadsAnswered: Int?
    /// Nanoseconds spent in the crash handler until the report was written.
    public var captureNs: UInt64?
    /// False when salvaged from a torn file.
    public var complete: Bool
    /// The signal of a crash inside the crash handler itself (salvaged reports only).
    public var recrashSignal: Int32?
    /// The hang the process died in (``Mechanism/hang`` only): who was blocked, and for how long.
    public var hang: Hang?
    /// The last breadcrumbs before the crash, oldest first (nil in reports of recorders without them).
    public var breadcrumbs: [Breadcrumb]?
    /// Breadcrumbs the ring held that the report left out (beyond the report's cap, or being written at the
    /// crash).
    public var breadcrumbsDropped: Int?
    /// The id of the Swift task the crashed thread was running (nil outside a task, or from recorders without it):
    /// the ``Breadcrumb/task`` of the breadcrumbs that task added.
    public var task: UInt64?
    /// The context of that task (`CohorlyCrash.withContext`): its tags (nil when none was set).
    public var taskContext: Properties?

    /// A report with its header only: no signal, no threads, not complete (the caller fills in what it has).
    public init(insertId: String, timestampMs: UInt64, pid: Int32, executable: String, mechanism: Mechanism) {
        format = CrashReportFormat.current
        self.insertId = insertId
        self.timestampMs = timestampMs
        self.pid = pid
        self.executable = executable
        self.mechanism = mechanism
        signal = Signal(number: 0, name: "", code: 0, address: Address(0))
        stackOverflow = false
        context = [:]
        threads = []
        modules = []
        complete = false
    }

    /// How a crash was caught.
    public enum Mechanism: String, Sendable {
        /// A plain signal.
        case signal
        /// A Swift runtime trap whose fatal-error text was found.
        case swiftFatal = "swift_fatal"
        /// An uncaught C++ exception.
        case cxxTerminate = "cxx_terminate"
        /// The process ended while a thread was hung (a hang report left by the watchdog; no signal).
        case hang
    }

    /// The signal that ended the process.
    public struct Signal: Sendable, Equatable {
        /// Signal number (4 = SIGILL…).
        public var number: Int32
        /// Signal name, e.g. `SIGSEGV`.
        public var name: String
        /// `si_code`.
        public var code: Int32
        /// `si_addr`: the fault address.
        public var address: Address

        /// A signal description.
        public init(number: Int32, name: String, code: Int32, address: Address) {
            self.number = number
            self.name = name
            self.code = code
            self.address = address
        }
    }

    /// An uncaught C++ exception.
    public struct CxxException: Sendable, Equatable {
        /// The demangled type, e.g. `std::runtime_error`.
        public var type: String
        /// The text of `what()` (empty when not a `std::exception`).
        public var what: String

        /// An exception of `type` with `what()` text `what`.
        public init(type: String, what: String) {
            self.type = type
            self.what = what
        }
    }

    /// One thread's stack: its physical frames, each with its kind, and the async callers when the recorder
    /// found them.
    public struct Thread: Sendable, Equatable {
        /// Kernel thread id.
        public var tid: Int32
        /// From `/proc/self/task/<tid>/comm`.
        public var name: String
        /// Whether this is the crashed thread.
        public var crashed: Bool
        /// Physical frames, innermost first; empty when the thread did not answer in time.
        public var frames: [Frame]
        /// More frames existed than were kept.
        public var truncated: Bool
        /// Registers at the crash (crashed thread only): `rip`, `rsp`, `rbp`, …
        public var registers: [String: Address]?
        /// The awaiting callers (format v2), when the recorder found a chain.
        public var async: AsyncChain?

        /// A thread description.
        public init(
            tid: Int32, name: String, crashed: Bool, frames: [Frame], truncated: Bool = false,
            registers: [String: Address]? = nil, async: AsyncChain? = nil
        ) {
            self.tid = tid
            self.name = name
            self.crashed = crashed
            self.frames = frames
            self.truncated = truncated
            self.registers = registers
            self.async = async
        }
    }

    /// A loaded ELF object, its addresses as ``Address``.
    public typealias Module = LoadedObject<Address>

    /// The hang a process died in (a report of ``Mechanism/hang``, left by the hang watchdog).
    public struct Hang: Sendable, Equatable {
        /// What was blocked: `main thread`, or the name of a heartbeat or watched executor.
        public var subject: String
        /// `main_thread`, `thread` (a heartbeat) or `executor`.
        public var kind: String
        /// How long it had been blocked when the process was last seen alive, in milliseconds.
        public var durationMs: UInt64
        /// The threshold in force, in milliseconds.
        public var thresholdMs: UInt64

        /// A hang description.
        public init(subject: String, kind: String, durationMs: UInt64, thresholdMs: UInt64) {
            self.subject = subject
            self.kind = kind
            self.durationMs = durationMs
            self.thresholdMs = thresholdMs
        }
    }

    /// Every thread, the crashed one first.
    public var allThreads: [Thread] { (crashedThread.map { [$0] } ?? []) + threads }

    /// The module that contains `address`, if any.
    public func module(containing address: Address) -> Module? {
        modules.first { $0.contains(address) }
    }

    /// The module that contains `frame`'s address, if any.
    public func module(containing frame: Frame) -> Module? { module(containing: frame.address) }
}

/// One breadcrumb: something the app did shortly before a crash (a `track` call, an identity change, or
/// `addBreadcrumb`), as a report keeps it.
public struct Breadcrumb: Sendable, Equatable {
    /// When it was added, unix milliseconds.
    public var timestampMs: UInt64
    /// `track`, `identity`, or the app's own category (default `app`).
    public var category: String
    /// The event name for `track`; `identify`, `alias` or `reset` for `identity`; the app's text otherwise.
    public var message: String
    /// A small JSON object: a summary of the event's properties, the new distinct id, or the app's data.
    public var data: Properties
    /// The id of the Swift task that added it (nil outside a task).
    public var task: UInt64?
    /// Its severity (Sentry's breadcrumb `level`: `debug`, `info`, `warning`, `error`, `fatal`) as it arrived with
    /// an event; nil: `info`, what every breadcrumb the app adds is.
    public var level: String? = nil
    /// Its kind (Sentry's breadcrumb `type`: `default`, `http`, `navigation`, `error`…) as it arrived with an
    /// event; nil: `default`, what every breadcrumb the app adds is.
    public var type: String? = nil

    /// A breadcrumb with these parts.
    public init(timestampMs: UInt64, category: String, message: String, data: Properties = [:], task: UInt64? = nil) {
        self.task = task
        self.timestampMs = timestampMs
        self.category = category
        self.message = message
        self.data = data
    }
}
