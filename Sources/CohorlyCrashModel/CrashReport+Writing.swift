extension CrashReport {
    /// The report as format v2 JSON (``CrashReportFormat/current``), as the Swift writers (hang file, salvager)
    /// store it: every frame with its kind, async chains beside the physical frames.
    public var json: CohorlyValue {
        var members: Properties = [
            "format": .string(CrashReportFormat.current), "insert_id": .string(insertId),
            "timestamp_ms": .int(Int(clamping: timestampMs)), "pid": .int(Int(pid)), "executable": .string(executable),
            "mechanism": .string(mechanism.rawValue),
            "signal": [
                "number": .int(Int(signal.number)), "name": .string(signal.name), "code": .int(Int(signal.code)),
                "address": signal.address.json,
            ],
            "stack_overflow": .bool(stackOverflow), "context": .object(context),
            "threads": .array(threads.map(Self.json)), "modules": .array(modules.map(Self.json)),
            "complete": .bool(complete),
        ]
        if let message { members["message"] = .string(message) }
        if let cxx { members["cxx"] = ["type": .string(cxx.type), "what": .string(cxx.what)] }
        if let crashedThread { members["crashed_thread"] = Self.json(crashedThread) }
        if let threadsRequested { members["threads_requested"] = .int(threadsRequested) }
        if let threadsAnswered { members["threads_answered"] = .int(threadsAnswered) }
        if let captureNs { members["capture_ns"] = .int(Int(clamping: captureNs)) }
        if let recrashSignal { members["recrash_signal"] = .int(Int(recrashSignal)) }
        if let hang {
            members["hang"] = [
                "subject": .string(hang.subject), "kind": .string(hang.kind),
                "duration_ms": .int(Int(clamping: hang.durationMs)),
                "threshold_ms": .int(Int(clamping: hang.thresholdMs)),
            ]
        }
        if let breadcrumbs {
            members["breadcrumbs"] = .array(
                breadcrumbs.map { crumb in
                    var value: Properties = [
                        "timestamp_ms": .int(Int(clamping: crumb.timestampMs)), "category": .string(crumb.category),
                        "message": .string(crumb.message), "data": .object(crumb.data),
                    ]
                    if let task = crumb.task { value["task"] = .int(Int(clamping: task)) }
                    return .object(value)
                })
        }
        if let breadcrumbsDropped { members["breadcrumbs_dropped"] = .int(breadcrumbsDropped) }
        if let task { members["task"] = .int(Int(clamping: task)) }
        if let taskContext { members["task_context"] = .object(taskContext) }
        return .object(members)
    }

    /// The report file's bytes: ``json`` as compact UTF-8 JSON.
    public var fileBytes: [UInt8] { Array(json.jsonString.utf8) }

    /// One frame as v2 writes it: `{"addr": "0x…", "kind": "…"}`.
    public static func json(_ frame: Frame) -> CohorlyValue {
        ["addr": frame.address.json, "kind": .string(frame.kind.wireName)]
    }

    private static func json(_ thread: Thread) -> CohorlyValue {
        var members: Properties = [
            "tid": .int(Int(thread.tid)), "name": .string(thread.name), "crashed": .bool(thread.crashed),
            "frames": .array(thread.frames.map(json)), "truncated": .bool(thread.truncated),
        ]
        if let registers = thread.registers { members["registers"] = .object(registers.mapValues(\.json)) }
        if let chain = thread.async {
            members["async"] = [
                "anchor": .int(chain.anchor), "stop": .string(chain.stop.rawValue),
                "frames": .array(chain.frames.map(json)),
            ]
        }
        return .object(members)
    }

    private static func json(_ module: Module) -> CohorlyValue {
        [
            "path": .string(module.path), "base": module.base.json, "size": module.size.json,
            "build_id": .string(module.buildId),
        ]
    }
}
