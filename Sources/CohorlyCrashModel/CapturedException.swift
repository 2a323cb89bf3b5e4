/// An `$exception` before any wire: a crash read from its report, a handled error, a hang or an abnormal exit,
/// with its threads (every frame with its kind, its in-app flag and the symbols found for it), the images the
/// frames point into, breadcrumbs and the crash-time properties. The event builders make it; each destination
/// renders its own schema from it (PostHog / Cohorly: `ExceptionBuilder` in CohorlyCrash); the collector and the
/// CLI read it back from a stored event (``init(exceptionEvent:)``) and symbolicate it.
public struct CapturedException: Sendable, Equatable {
    /// The reason: type, value, mechanism type, issue name.
    public var description: CrashDescription
    /// What the reason was decided from (a symbolicator finding a `Swift runtime failure` frame at the crash
    /// site decides again with ``CrashReason/describe(_:crashSite:)``).
    public var facts: CrashReason.Facts
    /// `$exception_level`: `fatal`, `error`…
    public var level: String
    /// Whether the app handled it.
    public var handled: Bool
    /// Whether there was no error value, only a message.
    public var synthetic: Bool
    /// More about the mechanism (a signal, a hang), sent as `mechanism.meta`.
    public var mechanismMeta: Properties
    /// The threads: the subject (crashed) one first.
    public var threads: [Thread]
    /// The images the frames point into.
    public var images: [Image]
    /// The debug images' `arch`, when known.
    public var arch: String?
    /// Breadcrumbs, oldest first.
    public var breadcrumbs: [Breadcrumb]
    /// Breadcrumbs the capture left out.
    public var breadcrumbsDropped: Int
    /// The event's other properties: the crash-time context (release, device, super properties…) and extras.
    public var properties: Properties
    /// Crash (or capture) time, unix milliseconds.
    public var timestampMs: Int64
    /// `$insert_id` (empty: made when rendered).
    public var insertId: String
    /// The process's executable.
    public var executable: String?
    /// False when the crash came from a salvaged, torn report.
    public var complete: Bool
    /// False when nothing could record a stack (an abnormal exit: killed, OOM, power loss): the event then has
    /// no stack trace at all.
    public var hasStack: Bool
    /// What the event it was read from listed as its exceptions, as sent (``ExceptionList/rendered``: made on
    /// the device, its list is its rendering).
    public var exceptionList: ExceptionList
    /// The event's `$exception_threads` as it arrived, when it was read from one that had them (nil: the model's
    /// own rendering of ``threads``).
    public var listedThreads: [ListedThread]?
    /// How each of the event's `$exception_breadcrumbs` differs from the model's rendering of its breadcrumb, in
    /// the rendered order (nil: none differs: a breadcrumb made on the device, or one sent with every member).
    public var breadcrumbDifferences: [SentDifference]?

    /// An exception with the given reason and threads; everything else empty.
    public init(description: CrashDescription, facts: CrashReason.Facts, level: String, handled: Bool) {
        self.description = description
        self.facts = facts
        self.level = level
        self.handled = handled
        synthetic = false
        mechanismMeta = [:]
        threads = []
        images = []
        breadcrumbs = []
        breadcrumbsDropped = 0
        properties = [:]
        timestampMs = 0
        insertId = ""
        complete = true
        hasStack = true
        exceptionList = .rendered
    }

    /// One thread: physical frames innermost first, and the awaiting callers after the anchor.
    public struct Thread: Sendable, Equatable {
        /// Kernel thread id.
        public var tid: Int32?
        /// Thread name.
        public var name: String?
        /// Whether it is the subject (crashed, hung, caught the error).
        public var crashed: Bool
        /// Whether frames were cut.
        public var truncated: Bool
        /// Physical frames, innermost first.
        public var frames: [StackFrame]
        /// The async callers, when found.
        public var async: AsyncStack?
        /// Whether this is the catching thread's stack of a handled error whose exception stack is the throw site
        /// (the same thread, captured where the error was caught; default false).
        public var catchSite: Bool

        /// A thread.
        public init(
            tid: Int32?, name: String?, crashed: Bool, truncated: Bool = false, frames: [StackFrame],
            async: AsyncStack? = nil, catchSite: Bool = false
        ) {
            self.catchSite = catchSite
            self.tid = tid
            self.name = name
            self.crashed = crashed
            self.truncated = truncated
            self.frames = frames
            self.async = async
        }

        /// The frames in the order a caller chain reads, innermost first: physical frames down to the anchor,
        /// the async callers, then the physical frames after the anchor (the executor's).
        public var logicalFrames: [StackFrame] {
            guard let async, async.anchor < frames.count else { return frames }
            return Array(frames[...async.anchor]) + async.frames + frames[(async.anchor + 1)...]
        }
    }

    /// The async callers of a thread (see ``AsyncChain``), each with its symbols.
    public struct AsyncStack: Sendable, Equatable {
        /// Index into the thread's physical frames of the frame the chain continues from.
        public var anchor: Int
        /// Why the walk ended.
        public var stop: AsyncChain.Stop
        /// Innermost first.
        public var frames: [StackFrame]

        /// A chain.
        public init(anchor: Int, stop: AsyncChain.Stop, frames: [StackFrame]) {
            self.anchor = anchor
            self.stop = stop
            self.frames = frames
        }
    }

    /// One frame with what is known about it.
    public struct StackFrame: Sendable, Equatable {
        /// The address and its kind.
        public var frame: Frame
        /// Whether it is the app's code.
        public var inApp: Bool
        /// Source-level frames found for it (innermost first, the physical function last; empty: raw).
        public var symbols: [FrameSymbol]
        /// What symbolication found for it beside its symbols (its image, the file address looked up); nil until
        /// a symbolicator (`CrashSymbolicator` in CohorlySymbols) answered.
        public var lookup: FrameLookup? = nil

        /// A frame.
        public init(_ frame: Frame, inApp: Bool = false, symbols: [FrameSymbol] = []) {
            self.frame = frame
            self.inApp = inApp
            self.symbols = symbols
        }
    }

    /// A loaded image, its addresses as `UInt64` (size 0: unknown).
    public typealias Image = LoadedObject<UInt64>

    /// The subject thread (crashed, hung, the one that caught the error).
    public var subject: Thread? { threads.first(where: \.crashed) ?? threads.first }

    /// The index in ``images`` of the image holding `address`.
    public func imageIndex(containing address: UInt64) -> Int? { images.firstIndex { $0.contains(address) } }
}
