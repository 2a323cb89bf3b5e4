import Foundation

@testable import Cohorly

/// Exception records of every kind, as CohorlyCrash makes them, for the Sentry tests.
enum SentryRecords {
    static let image = ExceptionRecord.Image(
        codeFile: "/opt/app/bin/App", codeId: "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434",
        debugId: "e20a2268-5dc6-c165-b6aa-a12fa6765a6e", imageAddress: "0x400000", imageSize: 65_536, arch: "x86_64")
    static let libc = ExceptionRecord.Image(
        codeFile: "/usr/lib/x86_64-linux-gnu/libc.so.6", codeId: "1c304742f114215453a8a777f6cdb3a2b8505e11",
        debugId: "4247301c-14f1-5421-53a8-a777f6cdb3a2", imageAddress: "0x7f0000000000", imageSize: 2_000_000,
        arch: "x86_64")

    /// Oldest first: libc's start, `main`, then the crash site with an inlined call.
    static let frames = [
        ExceptionRecord.Frame(
            instructionAddress: "0x7f0000001234", imageAddress: "0x7f0000000000", imagePath: libc.codeFile,
            function: "__libc_start_main", resolved: true),
        ExceptionRecord.Frame(
            instructionAddress: "0x401000", imageAddress: "0x400000", imagePath: image.codeFile, inApp: true,
            function: "main", filename: "/src/App/main.swift", line: 12, column: 5, language: "swift", resolved: true),
        ExceptionRecord.Frame(
            instructionAddress: "0x401234", imageAddress: "0x400000", imagePath: image.codeFile, inApp: true,
            function: "App.crash() -> ()", filename: "/src/App/Crash.swift", line: 3, column: 9, language: "swift",
            resolved: true),
        ExceptionRecord.Frame(
            instructionAddress: "0x401234", imageAddress: "0x400000", imagePath: image.codeFile, inApp: true,
            function: "Swift runtime failure: Index out of range", filename: "/src/App/Crash.swift", line: 3,
            resolved: true, inlined: true),
    ]

    static let context: Properties = [
        "release": "App@1.2.0", "$os": "Linux", "$os_version": "12", "$kernel_version": "6.1.0", "$arch": "x86_64",
        "$lib": "cohorly-swift-linux", "$app_name": "App", "$app_start_ms": 1_796_032_700_000, "plan": "pro",
        "seats": 3, "cart": ["items": 2], "distinct_id": "user-1",
    ]

    static func crash(_ insertId: String = "5c8e3a02-3f7a-4d57-9d7e-6f7f0a1b2c3d", at time: Int64 = 1_796_032_800_000)
        -> ExceptionRecord
    {
        ExceptionRecord(
            insertId: insertId, timestampMs: time, level: "fatal",
            issueName: "Swift runtime failure: Index out of range",
            exceptions: [
                ExceptionRecord.Exception(
                    type: "Swift runtime failure: Index out of range", value: "Index out of range",
                    mechanism: ExceptionRecord.Mechanism(
                        type: "swift_fatal", handled: false,
                        meta: ["signal": ["number": 5, "name": "SIGTRAP", "code": 128, "address": "0x0"]]),
                    threadId: 100, frames: frames)
            ],
            threads: [ExceptionRecord.Thread(id: 101, name: "worker", frames: Array(frames.prefix(2)))],
            images: [libc, image],
            breadcrumbs: [
                ExceptionRecord.Breadcrumb(
                    timestampMs: time - 1000, category: "track", message: "Checkout", data: ["step": "pay"])
            ],
            properties: context.merging(["$exception_pid": 4242, "$exception_thread_name": "main"]) { $1 })
    }

    static func signal(_ insertId: String = "0190a6b4-0000-7000-8000-00000000000a") -> ExceptionRecord {
        var record = crash(insertId)
        record.exceptions[0].type = "SIGSEGV"
        record.exceptions[0].value = "Segmentation fault: address not mapped at 0x0"
        record.exceptions[0].mechanism = ExceptionRecord.Mechanism(
            type: "signal", handled: false,
            meta: ["signal": ["number": 11, "name": "SIGSEGV", "code": 1, "address": "0x0"]])
        record.issueName = nil
        return record
    }

    static func handled(_ insertId: String = UUID().uuidString.lowercased()) -> ExceptionRecord {
        ExceptionRecord(
            insertId: insertId, timestampMs: Int64(Date().timeIntervalSince1970 * 1000), level: "error",
            exceptions: [
                ExceptionRecord.Exception(
                    type: "App.ParseError", value: "bad input at line 3",
                    mechanism: ExceptionRecord.Mechanism(type: "generic", handled: true), threadId: 100,
                    frames: Array(frames.prefix(3)))
            ], images: [libc, image], properties: context)
    }

    static func message(_ insertId: String = UUID().uuidString.lowercased()) -> ExceptionRecord {
        var record = handled(insertId)
        record.exceptions[0].type = "Payment retried"
        record.exceptions[0].value = "Payment retried\nthree times"
        record.exceptions[0].mechanism.synthetic = true
        return record
    }

    static func hang(_ insertId: String = UUID().uuidString.lowercased()) -> ExceptionRecord {
        var record = handled(insertId)
        record.exceptions[0].type = "Hang"
        record.exceptions[0].value = "main thread blocked for 3.02 s"
        record.exceptions[0].mechanism = ExceptionRecord.Mechanism(
            type: "hang", handled: false, meta: ["hang": ["duration_ms": 3020, "subject": "main thread"]])
        record.properties["$exception_hang_duration_ms"] = 3020
        return record
    }

    static func abnormalExit(_ insertId: String = UUID().uuidString.lowercased(), at time: Int64) -> ExceptionRecord {
        ExceptionRecord(
            insertId: insertId, timestampMs: time, level: "fatal", issueName: "Abnormal exit",
            exceptions: [
                ExceptionRecord.Exception(
                    type: "AbnormalExit", value: "Killed or lost power (SIGKILL, reboot, …). No stack trace.",
                    mechanism: ExceptionRecord.Mechanism(type: "abnormal_exit", handled: false))
            ], properties: context.merging(["$exception_abnormal_exit_cause": "killed_or_lost_power"]) { $1 })
    }
}
