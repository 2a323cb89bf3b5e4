import Foundation

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Exception records of every kind, as CohorlyCrash makes them, for the Sentry tests.
enum SentryRecords {
    static let image = CapturedException.Image(
        path: "/opt/app/bin/App", base: 0x40_0000, size: 65_536, buildId: "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434")
    static let libc = CapturedException.Image(
        path: "/usr/lib/x86_64-linux-gnu/libc.so.6", base: 0x7f00_0000_0000, size: 2_000_000,
        buildId: "1c304742f114215453a8a777f6cdb3a2b8505e11")

    /// The crash site (exact: interrupted by the signal) with an inlined call, `main`, then libc's start.
    static let stack = [
        CapturedException.StackFrame(
            Frame(0x40_1234, kind: .pc), inApp: true,
            symbols: [
                FrameSymbol(
                    function: "Swift runtime failure: Index out of range", file: "/src/App/Crash.swift", line: 3,
                    column: 0, inlined: true),
                FrameSymbol(
                    function: "App.crash() -> ()", rawFunction: "$s3App5crashyyF", file: "/src/App/Crash.swift",
                    line: 3,
                    column: 9, inlined: false),
            ]),
        CapturedException.StackFrame(
            Frame(0x40_1000, kind: .returnAddress), inApp: true,
            symbols: [FrameSymbol(function: "main", file: "/src/App/main.swift", line: 12, column: 5, inlined: false)]),
        CapturedException.StackFrame(
            Frame(0x7f00_0000_1234, kind: .returnAddress),
            symbols: [FrameSymbol(function: "__libc_start_main", file: nil, line: 0, column: 0, inlined: false)]),
    ]

    /// The functions of ``stack`` as the wires list them: oldest first, an inlined call after its frame.
    static let functions = [
        "__libc_start_main", "main", "App.crash() -> ()", "Swift runtime failure: Index out of range",
    ]

    static let context: Properties = [
        "release": "App@1.2.0", "$os": "Linux", "$os_version": "12", "$kernel_version": "6.1.0", "$arch": "x86_64",
        "$lib": "cohorly-swift-linux", "$app_name": "App", "$app_start_ms": 1_796_032_700_000, "plan": "pro",
        "seats": 3, "cart": ["items": 2], "distinct_id": "user-1",
    ]

    static func exception(
        type: String, value: String, mechanism: String, issueName: String? = nil, level: String, handled: Bool,
        insertId: String, at time: Int64
    ) -> CapturedException {
        let description = CrashDescription(type: type, value: value, mechanism: mechanism, issueName: issueName)
        var exception = CapturedException(
            description: description, facts: CrashReason.Facts(given: description), level: level, handled: handled)
        exception.insertId = insertId
        exception.timestampMs = time
        exception.images = [libc, image]
        exception.properties = context
        return exception
    }

    static func crash(_ insertId: String = "5c8e3a02-3f7a-4d57-9d7e-6f7f0a1b2c3d", at time: Int64 = 1_796_032_800_000)
        -> QueuedException
    {
        var exception = exception(
            type: "Swift runtime failure: Index out of range", value: "Index out of range", mechanism: "swift_fatal",
            issueName: "Swift runtime failure: Index out of range", level: "fatal", handled: false, insertId: insertId,
            at: time)
        exception.mechanismMeta = ["signal": ["number": 5, "name": "SIGTRAP", "code": 128, "address": "0x0"]]
        exception.threads = [
            CapturedException.Thread(tid: 100, name: "main", crashed: true, frames: stack),
            CapturedException.Thread(
                tid: 101, name: "worker", crashed: false,
                frames: Array(stack.suffix(2))),
        ]
        exception.breadcrumbs = [
            Breadcrumb(timestampMs: UInt64(time - 1000), category: "track", message: "Checkout", data: ["step": "pay"])
        ]
        exception.properties["$exception_pid"] = 4242
        return QueuedException(exception)
    }

    static func signal(_ insertId: String = "0190a6b4-0000-7000-8000-00000000000a") -> QueuedException {
        var record = crash(insertId)
        record.exception.description = CrashDescription(
            type: "SIGSEGV", value: "Segmentation fault: address not mapped at 0x0", mechanism: "signal", issueName: nil
        )
        record.exception.mechanismMeta = ["signal": ["number": 11, "name": "SIGSEGV", "code": 1, "address": "0x0"]]
        return record
    }

    /// A handled error: the stack captured by a call (every frame a return address), without the inlined call.
    static func handled(_ insertId: String = UUID().uuidString.lowercased()) -> QueuedException {
        var exception = exception(
            type: "App.ParseError", value: "bad input at line 3", mechanism: "generic", level: "error", handled: true,
            insertId: insertId, at: Int64(Date().timeIntervalSince1970 * 1000))
        var frames = stack
        frames[0].frame.kind = .returnAddress
        frames[0].symbols.removeFirst()
        exception.threads = [CapturedException.Thread(tid: 100, name: nil, crashed: true, frames: frames)]
        return QueuedException(exception)
    }

    static func message(_ insertId: String = UUID().uuidString.lowercased()) -> QueuedException {
        var record = handled(insertId)
        record.exception.description.type = "Payment retried"
        record.exception.description.value = "Payment retried\nthree times"
        record.exception.synthetic = true
        return record
    }

    static func hang(_ insertId: String = UUID().uuidString.lowercased()) -> QueuedException {
        var record = handled(insertId)
        record.exception.description = CrashDescription(
            type: "Hang", value: "main thread blocked for 3.02 s", mechanism: "hang", issueName: nil)
        record.exception.handled = false
        record.exception.mechanismMeta = ["hang": ["duration_ms": 3020, "subject": "main thread"]]
        record.properties["$exception_hang_duration_ms"] = 3020
        return record
    }

    static func abnormalExit(_ insertId: String = UUID().uuidString.lowercased(), at time: Int64) -> QueuedException {
        var exception = exception(
            type: "AbnormalExit", value: "Killed or lost power (SIGKILL, reboot, …). No stack trace.",
            mechanism: "abnormal_exit", issueName: "Abnormal exit", level: "fatal", handled: false, insertId: insertId,
            at: time)
        exception.hasStack = false
        exception.images = []
        exception.properties["$exception_abnormal_exit_cause"] = "killed_or_lost_power"
        return QueuedException(exception)
    }
}
