import Cohorly
import Foundation

/// One crash report, format `cohorly-crash/1` (docs/report-format.md), as decoded from a report file.
///
/// The header fields are required; the later sections are optional because a report salvaged from a torn
/// file (``complete`` false) may end before them.
public struct CrashReport: Codable, Sendable, Equatable {
    /// The format tag this model reads.
    public static let formatTag = "cohorly-crash/1"

    /// Always ``formatTag``.
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
    /// Breadcrumbs the ring held that the report left out (beyond ``Breadcrumb/maxReportBytes``, or being
    /// written at the crash).
    public var breadcrumbsDropped: Int?

    /// How a crash was caught.
    public enum Mechanism: String, Codable, Sendable {
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
    public struct Signal: Codable, Sendable, Equatable {
        /// Signal number (4 = SIGILL…).
        public var number: Int32
        /// Signal name, e.g. `SIGSEGV`.
        public var name: String
        /// `si_code`.
        public var code: Int32
        /// `si_addr`: the fault address.
        public var address: Address

        /// Decodes a signal; fields missing from a salvaged report take neutral values.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            number = try c.decodeIfPresent(Int32.self, forKey: .number) ?? 0
            name = try c.decodeIfPresent(String.self, forKey: .name) ?? ""
            code = try c.decodeIfPresent(Int32.self, forKey: .code) ?? 0
            address = try c.decodeIfPresent(Address.self, forKey: .address) ?? Address(0)
        }

        /// A signal description.
        public init(number: Int32, name: String, code: Int32, address: Address) {
            self.number = number
            self.name = name
            self.code = code
            self.address = address
        }
    }

    /// An uncaught C++ exception.
    public struct CxxException: Codable, Sendable, Equatable {
        /// The demangled type, e.g. `std::runtime_error`.
        public var type: String
        /// The text of `what()` (empty when not a `std::exception`).
        public var what: String

        /// Decodes an exception; fields missing from a salvaged report are empty.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            type = try c.decodeIfPresent(String.self, forKey: .type) ?? ""
            what = try c.decodeIfPresent(String.self, forKey: .what) ?? ""
        }

        /// An exception of `type` with `what()` text `what`.
        public init(type: String, what: String) {
            self.type = type
            self.what = what
        }
    }

    /// One thread's stack. Frame 0 is the exact PC; the others are return addresses.
    public struct Thread: Codable, Sendable, Equatable {
        /// Kernel thread id.
        public var tid: Int32
        /// From `/proc/self/task/<tid>/comm`.
        public var name: String
        /// Whether this is the crashed thread.
        public var crashed: Bool
        /// Innermost first; empty when the thread did not answer in time.
        public var frames: [Address]
        /// More frames existed than were kept.
        public var truncated: Bool
        /// Registers at the crash (crashed thread only): `rip`, `rsp`, `rbp`, …
        public var registers: [String: Address]?

        /// Decodes a thread; in a salvaged report a thread cut short keeps the frames written so far and
        /// counts as truncated.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            tid = try c.decodeIfPresent(Int32.self, forKey: .tid) ?? 0
            name = try c.decodeIfPresent(String.self, forKey: .name) ?? ""
            crashed = try c.decodeIfPresent(Bool.self, forKey: .crashed) ?? false
            frames = try c.decodeIfPresent([Address].self, forKey: .frames) ?? []
            truncated = try c.decodeIfPresent(Bool.self, forKey: .truncated) ?? true
            registers = try c.decodeIfPresent([String: Address].self, forKey: .registers)
        }

        /// A thread description.
        public init(
            tid: Int32, name: String, crashed: Bool, frames: [Address], truncated: Bool = false,
            registers: [String: Address]? = nil
        ) {
            self.tid = tid
            self.name = name
            self.crashed = crashed
            self.frames = frames
            self.truncated = truncated
            self.registers = registers
        }
    }

    /// A loaded ELF object.
    public struct Module: Codable, Sendable, Equatable {
        /// Path as the loader knows it.
        public var path: String
        /// Address of the first `PT_LOAD` page.
        public var base: Address
        /// Extent of the `PT_LOAD` segments.
        public var size: Address
        /// GNU build id, lowercase hex (empty when the object has none).
        public var buildId: String

        /// Decodes a module; in a salvaged report a module cut short has no build id and size 0.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            path = try c.decodeIfPresent(String.self, forKey: .path) ?? ""
            base = try c.decodeIfPresent(Address.self, forKey: .base) ?? Address(0)
            size = try c.decodeIfPresent(Address.self, forKey: .size) ?? Address(0)
            buildId = try c.decodeIfPresent(String.self, forKey: .buildId) ?? ""
        }

        /// A module description.
        public init(path: String, base: Address, size: Address, buildId: String) {
            self.path = path
            self.base = base
            self.size = size
            self.buildId = buildId
        }

        enum CodingKeys: String, CodingKey {
            case path, base, size
            case buildId = "build_id"
        }

        /// Whether `address` lies inside this module.
        public func contains(_ address: Address) -> Bool {
            address.value >= base.value && address.value - base.value < size.value
        }
    }

    /// Every thread, the crashed one first.
    public var allThreads: [Thread] { (crashedThread.map { [$0] } ?? []) + threads }

    /// The module that contains `address`, if any.
    public func module(containing address: Address) -> Module? {
        modules.first { $0.contains(address) }
    }

    enum CodingKeys: String, CodingKey {
        case format, pid, executable, mechanism, signal, message, cxx, context, threads, modules,
            complete
        case insertId = "insert_id"
        case timestampMs = "timestamp_ms"
        case stackOverflow = "stack_overflow"
        case crashedThread = "crashed_thread"
        case threadsRequested = "threads_requested"
        case threadsAnswered = "threads_answered"
        case captureNs = "capture_ns"
        case recrashSignal = "recrash_signal"
        case hang
        case breadcrumbs
        case breadcrumbsDropped = "breadcrumbs_dropped"
    }

    /// Decodes a report; the sections after the header may be missing (salvaged reports).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        format = try c.decode(String.self, forKey: .format)
        insertId = try c.decode(String.self, forKey: .insertId)
        timestampMs = try c.decode(UInt64.self, forKey: .timestampMs)
        pid = try c.decode(Int32.self, forKey: .pid)
        executable = try c.decodeIfPresent(String.self, forKey: .executable) ?? ""
        mechanism = try c.decodeIfPresent(Mechanism.self, forKey: .mechanism) ?? .signal
        signal =
            try c.decodeIfPresent(Signal.self, forKey: .signal)
            ?? Signal(number: 0, name: "", code: 0, address: Address(0))
        message = try c.decodeIfPresent(String.self, forKey: .message)
        cxx = try c.decodeIfPresent(CxxException.self, forKey: .cxx)
        stackOverflow = try c.decodeIfPresent(Bool.self, forKey: .stackOverflow) ?? false
        crashedThread = try c.decodeIfPresent(Thread.self, forKey: .crashedThread)
        context = try c.decodeIfPresent([String: CohorlyValue].self, forKey: .context) ?? [:]
        threads = try c.decodeIfPresent([Thread].self, forKey: .threads) ?? []
        modules = try c.decodeIfPresent([Module].self, forKey: .modules) ?? []
        threadsRequested = try c.decodeIfPresent(Int.self, forKey: .threadsRequested)
        threadsAnswered = try c.decodeIfPresent(Int.self, forKey: .threadsAnswered)
        captureNs = try c.decodeIfPresent(UInt64.self, forKey: .captureNs)
        complete = try c.decodeIfPresent(Bool.self, forKey: .complete) ?? false
        recrashSignal = try c.decodeIfPresent(Int32.self, forKey: .recrashSignal)
        hang = try c.decodeIfPresent(Hang.self, forKey: .hang)
        breadcrumbs = try c.decodeIfPresent([Breadcrumb].self, forKey: .breadcrumbs)
        breadcrumbsDropped = try c.decodeIfPresent(Int.self, forKey: .breadcrumbsDropped)
    }

    /// Decodes `data` as a report of this format.
    /// - Throws: ``CrashReportStore/ReportError`` describing why it is not one (without a file name).
    public static func decode(_ data: Data) throws -> CrashReport {
        let report: CrashReport
        do {
            report = try JSONDecoder().decode(CrashReport.self, from: data)
        } catch {
            throw CrashReportStore.ReportError.corrupt(file: "", reason: Self.describe(error))
        }
        guard report.format == formatTag else {
            throw CrashReportStore.ReportError.unsupportedFormat(file: "", format: report.format)
        }
        return report
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): "not valid JSON (\(context.debugDescription))"
        case DecodingError.keyNotFound(let key, _): "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "\(error)"
        }
    }
}

/// A 64-bit address, written as a `"0x…"` string in reports (JSON numbers lose precision above 2^53).
public struct Address: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The address.
    public var value: UInt64

    /// Wraps `value`.
    public init(_ value: UInt64) { self.value = value }

    /// `0x` followed by lowercase hex.
    public var description: String { "0x" + String(value, radix: 16) }

    /// Orders by value.
    public static func < (lhs: Address, rhs: Address) -> Bool { lhs.value < rhs.value }

    /// Reads `"0x…"` (or a plain JSON number, for hand-written files).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(UInt64.self) {
            value = number
            return
        }
        let text = try container.decode(String.self)
        let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : Substring(text)
        guard let parsed = UInt64(digits, radix: 16) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a hex address: \(text)")
        }
        value = parsed
    }

    /// Writes `"0x…"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
