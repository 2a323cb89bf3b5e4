import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

extension ExceptionEvent {
    /// Exception type, value, mechanism and issue name, as an issue list shows them.
    public struct Description: Equatable, Sendable {
        /// The failure: `Fatal error`, `Swift runtime failure: Index out of range`, `std::runtime_error`,
        /// `SIGSEGV`. PostHog groups by it (with the in-app frames).
        public var type: String
        /// The details: `Index out of range`, `what()`, `Segmentation fault: address not mapped at 0x0`.
        public var value: String
        /// `swift_fatal`, `cxx_exception`, `signal` or `hang`.
        public var mechanism: String
        /// The reason in one line (`Fatal error: Index out of range`); nil when only the signal is known.
        public var issueName: String?

        /// A description with these parts.
        public init(type: String, value: String, mechanism: String, issueName: String?) {
            self.type = type
            self.value = value
            self.mechanism = mechanism
            self.issueName = issueName
        }
    }

    /// The most specific reason known: the uncaught C++ exception, the Swift fatal-error message, a
    /// `Swift runtime failure: …` inlined frame at the crash site (a release build's trap, found when the
    /// crash site was symbolicated: `crashSite` holds its frames), else the signal.
    public static func describe(_ report: CrashReport, crashSite: [SymbolicatedFrame]? = nil) -> Description {
        if let hang = report.hang { return describeHang(hang, diedHung: true) }
        if let cxx = report.cxx {
            let issue = cxx.what.isEmpty ? cxx.type : "\(cxx.type): \(cxx.what)"
            return Description(type: cxx.type, value: cxx.what, mechanism: "cxx_exception", issueName: issue)
        }
        if let message = report.message?.trimmingSuffix(while: { $0 == "\n" }), !message.isEmpty {
            let (type, value) = splitSwiftMessage(message)
            let issue = value.isEmpty ? type : "\(type): \(value)"
            return Description(type: type, value: value, mechanism: "swift_fatal", issueName: issue)
        }
        if let failure = crashSite?.lazy.compactMap(\.swiftRuntimeFailure).first {
            let type = "Swift runtime failure: \(failure)"
            return Description(type: type, value: failure, mechanism: "swift_fatal", issueName: type)
        }
        let signal = report.signal
        var value = signalDescription(signal.number, code: signal.code)
        if report.stackOverflow { value = "Stack overflow" }
        if [SIGSEGV, SIGBUS, SIGILL, SIGFPE].contains(signal.number) { value += " at \(signal.address)" }
        return Description(
            type: signal.name.isEmpty ? "SIG\(signal.number)" : signal.name, value: value, mechanism: "signal",
            issueName: nil)
    }

    /// `<file>:<line>: <Prefix>: <text>` → (Prefix, text); a runtime message without a prefix is a fatal error.
    static func splitSwiftMessage(_ message: String) -> (String, String) {
        for prefix in ["Fatal error", "Precondition failed", "Assertion failed"] {
            if let range = message.range(of: prefix + ": ") {
                return (prefix, String(message[range.upperBound...]))
            }
            if message.hasSuffix(prefix) || message.hasSuffix(prefix + ":") { return (prefix, "") }
        }
        return ("Fatal error", message)
    }

    static func signalDescription(_ number: Int32, code: Int32) -> String {
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
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var copy = self
        while let last = copy.last, predicate(last) { copy.removeLast() }
        return copy
    }
}
