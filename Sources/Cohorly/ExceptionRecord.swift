import Foundation

/// A prepared exception — a crash, a handled error, a hang, an abnormal exit — as one typed value: what the queue
/// holds and what every destination renders in its own schema (the Cohorly API and PostHog: the `$exception`
/// event, ``event``; Sentry: its native event). CohorlyCrash builds it; nothing reads it back out of properties.
public struct ExceptionRecord: Sendable, Hashable {
    /// One native stack frame.
    public struct Frame: Sendable, Hashable {
        /// The frame's address, `0x…`.
        public var instructionAddress: String
        /// The base address of the image holding it, `0x…` (nil: in no known image).
        public var imageAddress: String?
        /// The path of that image.
        public var imagePath: String?
        /// Whether the frame is the app's own code.
        public var inApp: Bool
        /// The function, when symbolicated on the device.
        public var function: String?
        /// The Swift linkage (mangled) name ``function`` was demangled from, when it was one: a reader prints
        /// either naming style from it (`crash(on:_:)` or the full name). Sent as `symbol`, Sentry's name for it.
        public var symbol: String?
        /// The source file, when symbolicated on the device.
        public var filename: String?
        /// The line (0: unknown).
        public var line: Int
        /// The column (0: unknown).
        public var column: Int
        /// `swift`, `cpp` or `c`, when known.
        public var language: String?
        /// Whether the device symbolicated it (function or file known).
        public var resolved: Bool
        /// Whether it is an inlined call inside the physical frame before it.
        public var inlined: Bool
        /// What the address is, as the crash model names it (`pc`, `return_address`, `async_resume`): only a
        /// return address is looked up one byte back. Nil for an inlined frame (its physical frame's applies).
        public var kind: String?

        /// A frame with these parts.
        public init(
            instructionAddress: String, imageAddress: String? = nil, imagePath: String? = nil, inApp: Bool = false,
            function: String? = nil, symbol: String? = nil, filename: String? = nil, line: Int = 0, column: Int = 0,
            language: String? = nil, resolved: Bool = false, inlined: Bool = false, kind: String? = nil
        ) {
            self.instructionAddress = instructionAddress
            self.imageAddress = imageAddress
            self.imagePath = imagePath
            self.inApp = inApp
            self.function = function
            self.symbol = symbol
            self.filename = filename
            self.line = line
            self.column = column
            self.language = language
            self.resolved = resolved
            self.inlined = inlined
            self.kind = kind
        }

        /// The image's file name (PostHog's `module`).
        public var module: String? {
            imagePath.map { path in
                path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
            }
        }
    }

    /// How the exception was caught.
    public struct Mechanism: Sendable, Hashable {
        /// `signal`, `swift_fatal`, `cxx_exception`, `hang`, `generic`, `abnormal_exit`, …
        public var type: String
        /// Whether the app handled it.
        public var handled: Bool
        /// Whether the type is only a signal's or a message's, not an error's.
        public var synthetic: Bool
        /// More fields (`signal {number, code, name, address}`, `hang {duration_ms, subject}`, …).
        public var meta: Properties

        /// A mechanism with these parts.
        public init(type: String, handled: Bool, synthetic: Bool = false, meta: Properties = [:]) {
            self.type = type
            self.handled = handled
            self.synthetic = synthetic
            self.meta = meta
        }
    }

    /// One exception: the failure, how it was caught and the stack it happened on.
    public struct Exception: Sendable, Hashable {
        /// The failure: `Fatal error`, `std::runtime_error`, `SIGSEGV`, an error's type name, `Hang`, …
        public var type: String
        /// Its details.
        public var value: String
        /// How it was caught.
        public var mechanism: Mechanism
        /// The thread it happened on (nil: none, as for an abnormal exit).
        public var threadId: Int32?
        /// Its frames, oldest first (the crash site last); nil when there is no stack. A thread's async callers
        /// (frames of kind `async_resume`) stand between the frame they continue from and the executor's frames.
        public var frames: [Frame]?
        /// Why the walk of the thread's async callers stopped (`task_root`, `fault`, …), when it has some.
        public var asyncStop: String?

        /// An exception with these parts.
        public init(
            type: String, value: String, mechanism: Mechanism, threadId: Int32? = nil, frames: [Frame]? = nil,
            asyncStop: String? = nil
        ) {
            self.type = type
            self.value = value
            self.mechanism = mechanism
            self.threadId = threadId
            self.frames = frames
            self.asyncStop = asyncStop
        }
    }

    /// A thread other than the exception's.
    public struct Thread: Sendable, Hashable {
        /// The thread id.
        public var id: Int32
        /// Its name (empty: none).
        public var name: String
        /// Its frames, oldest first.
        public var frames: [Frame]
        /// Why the walk of its async callers stopped, when it has some.
        public var asyncStop: String?

        /// A thread with these parts.
        public init(id: Int32, name: String, frames: [Frame], asyncStop: String? = nil) {
            self.id = id
            self.name = name
            self.frames = frames
            self.asyncStop = asyncStop
        }
    }

    /// A loaded ELF image the frames point into.
    public struct Image: Sendable, Hashable {
        /// Its path.
        public var codeFile: String
        /// Its full GNU build id, hex.
        public var codeId: String
        /// The build id's first 16 bytes as a GUID (Sentry's rule).
        public var debugId: String
        /// Its base address, `0x…`.
        public var imageAddress: String
        /// Its mapped size in bytes.
        public var imageSize: Int
        /// `x86_64`, `aarch64`, …
        public var arch: String

        /// An image with these parts.
        public init(
            codeFile: String, codeId: String, debugId: String, imageAddress: String, imageSize: Int, arch: String
        ) {
            self.codeFile = codeFile
            self.codeId = codeId
            self.debugId = debugId
            self.imageAddress = imageAddress
            self.imageSize = imageSize
            self.arch = arch
        }
    }

    /// Something the app recorded before the exception.
    public struct Breadcrumb: Sendable, Hashable {
        /// When, unix milliseconds.
        public var timestampMs: Int64
        /// `track`, `identity`, or the app's.
        public var category: String
        /// What happened.
        public var message: String
        /// Its data.
        public var data: Properties

        /// A breadcrumb with these parts.
        public init(timestampMs: Int64, category: String, message: String, data: Properties) {
            self.timestampMs = timestampMs
            self.category = category
            self.message = message
            self.data = data
        }
    }

    /// The dedupe key (`$insert_id`): stable across resends.
    public var insertId: String
    /// When it happened, unix milliseconds.
    public var timestampMs: Int64
    /// `fatal`, `error`, …
    public var level: String
    /// The reason in one line, when type and value do not say it well.
    public var issueName: String?
    /// The exceptions, the one that ended it first.
    public var exceptions: [Exception]
    /// The other threads (nil: none were captured).
    public var threads: [Thread]?
    /// The images the frames reference (nil: no stack was captured).
    public var images: [Image]?
    /// The breadcrumbs, oldest first (nil: none were recorded).
    public var breadcrumbs: [Breadcrumb]?
    /// Everything else, as event properties: the crash-time context (release, device, identity, super
    /// properties) and the facts destinations pass on as they are (`$exception_pid`, a hang's duration, …).
    public var properties: Properties

    /// A record with these parts.
    public init(
        insertId: String, timestampMs: Int64, level: String, issueName: String? = nil, exceptions: [Exception],
        threads: [Thread]? = nil, images: [Image]? = nil, breadcrumbs: [Breadcrumb]? = nil, properties: Properties = [:]
    ) {
        self.insertId = insertId
        self.timestampMs = timestampMs
        self.level = level
        self.issueName = issueName
        self.exceptions = exceptions
        self.threads = threads
        self.images = images
        self.breadcrumbs = breadcrumbs
        self.properties = properties
    }

    /// The distinct id it is about (set by the client when it is queued).
    public var distinctId: String? { properties["distinct_id"]?.stringValue }
}
