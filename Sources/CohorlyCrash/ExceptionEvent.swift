import Cohorly

#if canImport(Glibc)
    import Glibc
#endif

/// The `$exception` event a crash report becomes: the one place that knows its shape.
///
/// Cohorly publishes no `$exception` schema; this follows the closest published one (PostHog's `$exception`
/// with `$exception_list`) plus Sentry-style debug images, so a symbolicator can map every frame to its ELF
/// file by build id. Everything about the launch comes from the report (the launch that crashed), never from
/// the launch that sends it.
public enum ExceptionEvent {
    /// The event name.
    public static let name = "$exception"

    /// The event for `report`: fatal level, the report's `$insert_id` and crash time, its context.
    public static func make(from report: CrashReport) -> PreparedEvent {
        var properties: Properties = [:]
        // Crash-time context first: release, identity, device, app properties.
        for (key, value) in report.context where key != "properties" { properties[key] = value }
        if case .object(let extra)? = report.context["properties"] {
            for (key, value) in extra where properties[key] == nil { properties[key] = value }
        }
        let description = describe(report)
        properties["time"] = .int(Int(clamping: report.timestampMs))
        properties["$insert_id"] = .string(report.insertId)
        properties["$exception_level"] = "fatal"
        properties["$exception_type"] = .string(description.type)
        properties["$exception_message"] = .string(description.value)
        properties["$exception_list"] = [
            .object([
                "type": .string(description.type),
                "value": .string(description.value),
                "mechanism": [
                    "type": .string(description.mechanism), "handled": false,
                    "synthetic": .bool(description.synthetic),
                    "meta": [
                        "signal": [
                            "number": .int(Int(report.signal.number)), "name": .string(report.signal.name),
                            "code": .int(Int(report.signal.code)),
                            "address": .string(report.signal.address.description),
                        ]
                    ],
                ],
                "thread_id": .int(Int(report.crashedThread?.tid ?? 0)),
                "stacktrace": stacktrace(report.crashedThread, in: report),
            ])
        ]
        properties["$exception_threads"] = .array(
            report.threads.map { thread in
                [
                    "thread_id": .int(Int(thread.tid)), "name": .string(thread.name), "crashed": false,
                    "stacktrace": stacktrace(thread, in: report),
                ]
            })
        properties["$debug_images"] = .array(report.modules.map(debugImage))
        properties["$exception_pid"] = .int(Int(report.pid))
        properties["$exception_executable"] = .string(report.executable)
        if report.stackOverflow { properties["$exception_stack_overflow"] = true }
        if !report.complete { properties["$exception_report_complete"] = false }
        if let captureNs = report.captureNs { properties["$exception_capture_ns"] = .int(Int(clamping: captureNs)) }
        return PreparedEvent(name: name, properties: properties)
    }

    /// Exception type, value and mechanism as an issue list shows them.
    public struct Description: Equatable, Sendable {
        /// e.g. `Fatal error`, `std::runtime_error`, `SIGSEGV`.
        public var type: String
        /// e.g. `Index out of range`, `what()`, `Segmentation fault: address not mapped at 0x0`.
        public var value: String
        /// `swift`, `cxx` or `signalhandler`.
        public var mechanism: String
        /// True when type and value were made from the signal (nothing more specific was known).
        public var synthetic: Bool

        /// A description with these parts.
        public init(type: String, value: String, mechanism: String, synthetic: Bool) {
            self.type = type
            self.value = value
            self.mechanism = mechanism
            self.synthetic = synthetic
        }
    }

    /// Type and value: from the Swift message ("Fatal error: …"), from the C++ exception, else from the signal.
    public static func describe(_ report: CrashReport) -> Description {
        if let cxx = report.cxx {
            return Description(type: cxx.type, value: cxx.what, mechanism: "cxx", synthetic: false)
        }
        if let message = report.message?.trimmingSuffix(while: { $0 == "\n" }), !message.isEmpty {
            let (type, value) = splitSwiftMessage(message)
            return Description(type: type, value: value, mechanism: "swift", synthetic: false)
        }
        let signal = report.signal
        var value = signalDescription(signal.number, code: signal.code)
        if report.stackOverflow { value = "Stack overflow" }
        if [SIGSEGV, SIGBUS, SIGILL, SIGFPE].contains(signal.number) { value += " at \(signal.address)" }
        return Description(
            type: signal.name.isEmpty ? "SIG\(signal.number)" : signal.name, value: value, mechanism: "signalhandler",
            synthetic: true)
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

    /// Frames oldest first (the crashing frame last), as Sentry and PostHog order them.
    static func stacktrace(_ thread: CrashReport.Thread?, in report: CrashReport) -> CohorlyValue {
        let frames = (thread?.frames ?? []).enumerated().reversed().map { index, address -> CohorlyValue in
            var frame: Properties = ["instruction_addr": .string(address.description)]
            if let module = report.module(containing: address) {
                frame["image_addr"] = .string(module.base.description)
                frame["module"] = .string(module.path)
                frame["in_app"] = .bool(module.path == report.executable)
            }
            if index == 0 { frame["addr_mode"] = "exact" }
            return .object(frame)
        }
        return ["type": "raw", "frames": .array(frames)]
    }

    static func debugImage(_ module: CrashReport.Module) -> CohorlyValue {
        [
            "type": "elf", "code_file": .string(module.path), "code_id": .string(module.buildId),
            "debug_id": .string(debugId(fromBuildId: module.buildId)), "image_addr": .string(module.base.description),
            "image_size": .int(Int(clamping: module.size.value)), "arch": "x86_64",
        ]
    }

    /// The first 16 bytes of the build id as a GUID with the first three fields byte-swapped (Sentry's rule),
    /// e.g. `02547a30…` → `307a5402-…`; empty without a build id.
    public static func debugId(fromBuildId buildId: String) -> String {
        var bytes: [UInt8] = []
        var index = buildId.startIndex
        while bytes.count < 16, let next = buildId.index(index, offsetBy: 2, limitedBy: buildId.endIndex),
            let byte = UInt8(buildId[index..<next], radix: 16)
        {
            bytes.append(byte)
            index = next
        }
        guard !bytes.isEmpty else { return "" }
        bytes += [UInt8](repeating: 0, count: 16 - bytes.count)
        let ordered = [3, 2, 1, 0, 5, 4, 7, 6] + Array(8..<16)
        let hex = ordered.map { String(bytes[$0], radix: 16).leftPadded(to: 2) }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(
            separator: "-")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }

    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var copy = self
        while let last = copy.last, predicate(last) { copy.removeLast() }
        return copy
    }
}
