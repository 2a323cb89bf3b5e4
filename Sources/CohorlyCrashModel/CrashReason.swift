#if canImport(Glibc)
    import Glibc
#endif

/// Exception type, value, mechanism and issue name of a crash, as an issue list shows them, and where the
/// reason came from.
public struct CrashDescription: Equatable, Sendable {
    /// The failure: `Fatal error`, `Swift runtime failure: Index out of range`, `std::runtime_error`,
    /// `SIGSEGV`, `Hang`. PostHog groups by it (with the in-app frames).
    public var type: String
    /// The details: `Index out of range`, `what()`, `Segmentation fault: address not mapped at 0x0`.
    public var value: String
    /// `swift_fatal`, `cxx_exception`, `signal`, `hang`, or what an event named.
    public var mechanism: String
    /// The reason in one line (`Fatal error: Index out of range`); nil when only the signal is known.
    public var issueName: String?
    /// Where the reason came from: `message` (a Swift fatal-error text), `cxx_exception`, `dwarf` (a `Swift
    /// runtime failure: …` inlined frame at the crash site) or `signal` (anything else).
    public var source: String

    /// A description with these parts.
    public init(type: String, value: String, mechanism: String, issueName: String?, source: String = "signal") {
        self.type = type
        self.value = value
        self.mechanism = mechanism
        self.issueName = issueName
        self.source = source
    }

    /// The reason in one line, as `cohorly symbolicate` and `crashes show` print it after `Crash:`.
    public var summary: String {
        if mechanism == "cxx_exception" || mechanism == "cxx" {
            return "uncaught C++ exception \(type)" + (value.isEmpty ? "" : ": \(value)")
        }
        if let issueName, source != "signal" { return issueName }
        return value.isEmpty ? type : "\(type): \(value)"
    }
}

/// The one place that decides a crash's reason, for the device's events, `cohorly symbolicate` and the
/// collector alike.
public enum CrashReason {
    /// What is known about a crash.
    public struct Facts: Sendable, Equatable {
        /// The hang the process died in (or was in).
        public var hang: CrashReport.Hang?
        /// Whether the hang was still going on when the process ended.
        public var diedHung: Bool
        /// The uncaught C++ exception.
        public var cxx: CrashReport.CxxException?
        /// The Swift runtime's fatal-error text.
        public var message: String?
        /// The signal that ended the process.
        public var signal: CrashReport.Signal?
        /// Whether the fault looked like a stack overflow.
        public var stackOverflow: Bool
        /// A description already made (an event's type, value and mechanism), used when nothing above says more.
        public var given: CrashDescription?

        /// Facts; everything unknown by default.
        public init(
            hang: CrashReport.Hang? = nil, diedHung: Bool = true, cxx: CrashReport.CxxException? = nil,
            message: String? = nil, signal: CrashReport.Signal? = nil, stackOverflow: Bool = false,
            given: CrashDescription? = nil
        ) {
            self.hang = hang
            self.diedHung = diedHung
            self.cxx = cxx
            self.message = message
            self.signal = signal
            self.stackOverflow = stackOverflow
            self.given = given
        }

        /// The facts of a report.
        public init(report: CrashReport) {
            self.init(
                hang: report.hang, cxx: report.cxx, message: report.message, signal: report.signal,
                stackOverflow: report.stackOverflow)
        }
    }

    /// The most specific reason known, in this order: the hang, the uncaught C++ exception, the Swift
    /// fatal-error message, a given description that is not a bare signal, a `Swift runtime failure: …`
    /// inlined frame at the crash site (a release build's trap; `crashSite` holds the function names at frame 0
    /// of the crashed thread, innermost first), the given signal description, else the signal.
    public static func describe(_ facts: Facts, crashSite: [String?] = []) -> CrashDescription {
        if let hang = facts.hang { return describeHang(hang, diedHung: facts.diedHung) }
        if let cxx = facts.cxx {
            let issue = cxx.what.isEmpty ? cxx.type : "\(cxx.type): \(cxx.what)"
            return CrashDescription(
                type: cxx.type, value: cxx.what, mechanism: "cxx_exception", issueName: issue, source: "cxx_exception")
        }
        if let message = facts.message?.trimmingTrailingNewlines(), !message.isEmpty {
            let (type, value) = splitSwiftMessage(message)
            let issue = value.isEmpty ? type : "\(type): \(value)"
            return CrashDescription(
                type: type, value: value, mechanism: "swift_fatal", issueName: issue, source: "message")
        }
        if let given = facts.given, !isBareSignal(given.mechanism) { return given }
        if let failure = crashSite.lazy.compactMap(runtimeFailure).first {
            let type = "Swift runtime failure: \(failure)"
            return CrashDescription(
                type: type, value: failure, mechanism: "swift_fatal", issueName: type, source: "dwarf")
        }
        if let given = facts.given { return given }
        guard let signal = facts.signal else {
            return CrashDescription(type: "Unknown", value: "", mechanism: "signal", issueName: nil)
        }
        var value = signalDescription(signal.number, code: signal.code)
        if facts.stackOverflow { value = "Stack overflow" }
        if [SIGSEGV, SIGBUS, SIGILL, SIGFPE].contains(signal.number) { value += " at \(signal.address)" }
        return CrashDescription(
            type: signal.name.isEmpty ? "SIG\(signal.number)" : signal.name, value: value, mechanism: "signal",
            issueName: nil)
    }

    /// Whether ``describe(_:crashSite:)`` would use the crash site's function names: nothing more specific
    /// than the signal is known (a symbolicator can skip looking the crash site up otherwise).
    public static func needsCrashSite(_ facts: Facts) -> Bool {
        facts.hang == nil && facts.cxx == nil && (facts.message ?? "").isEmpty
            && (facts.given == nil || facts.given.map { isBareSignal($0.mechanism) } == true)
    }

    /// Whether an event's mechanism says no more than "a signal": `signal`, or Sentry's `signalhandler` (the
    /// mechanism of a signal caught by an SDK, which names only the signal).
    static func isBareSignal(_ mechanism: String) -> Bool { mechanism == "signal" || mechanism == "signalhandler" }

    /// The exception type of every hang event: PostHog groups hangs by it and the in-app frames of the hung
    /// thread.
    public static let hangType = "Hang"

    /// `Hang`, `main thread blocked for 3.02 s`; `diedHung` (a report left by a process that ended while hung)
    /// says so in the value.
    public static func describeHang(_ hang: CrashReport.Hang, diedHung: Bool) -> CrashDescription {
        let amount = seconds(milliseconds: hang.durationMs)
        let value =
            diedHung
            ? "\(hang.subject) blocked for at least \(amount) s when the process ended"
            : "\(hang.subject) blocked for \(amount) s"
        return CrashDescription(
            type: hangType, value: value, mechanism: "hang", issueName: "\(hangType): \(hang.subject)")
    }

    /// Milliseconds as seconds with two decimals (`3015` → `3.02`).
    static func seconds(milliseconds: UInt64) -> String {
        let centiseconds = milliseconds / 10 + (milliseconds % 10 >= 5 ? 1 : 0)
        let fraction = String(centiseconds % 100)
        return "\(centiseconds / 100)." + (fraction.count < 2 ? "0" : "") + fraction
    }

    /// The reason of a Swift runtime trap when `function` names its artificial inline frame
    /// (`Swift runtime failure: Division by zero` → `Division by zero`), else nil.
    public static func runtimeFailure(_ function: String?) -> String? {
        let prefix = "Swift runtime failure: "
        guard let function, function.hasPrefix(prefix) else { return nil }
        return String(function.dropFirst(prefix.count))
    }

    /// `<file>:<line>: <Prefix>: <text>` → (Prefix, text); a runtime message without a prefix is a fatal error.
    public static func splitSwiftMessage(_ message: String) -> (String, String) {
        for prefix in ["Fatal error", "Precondition failed", "Assertion failed"] {
            if let range = message.firstRange(of: prefix + ": ") {
                return (prefix, String(message[range.upperBound...]))
            }
            if message.hasSuffix(prefix) || message.hasSuffix(prefix + ":") { return (prefix, "") }
        }
        return ("Fatal error", message)
    }

    /// What a signal and its `si_code` mean, in words.
    public static func signalDescription(_ number: Int32, code: Int32) -> String {
        switch (number, code) {
        case (SIGSEGV, 1): "Segmentation fault: address not mapped"
        case (SIGSEGV, 2): "Segmentation fault: invalid permissions"
        case (SIGSEGV, _): "Segmentation fault"
        case (SIGBUS, 2): "Bus error: nonexistent physical address"
        case (SIGBUS, _): "Bus error"
        case (SIGILL, _): "Illegal instruction"
        case (SIGFPE, 1): "Floating-point exception: integer divide by zero"
        case (SIGFPE, _): "Floating-point exception"
        case (SIGTRAP, _): "Trace/breakpoint trap"
        case (SIGABRT, _): "Aborted"
        default: "Signal \(number)"
        }
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var copy = self
        while copy.last == "\n" { copy.removeLast() }
        return copy
    }
}
