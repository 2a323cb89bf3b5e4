import CohorlyCrashModel

/// Exception rows of the version before the queue held the crash model's exception: a layout of their own
/// (`insertId`, `exceptions[]` with `frames` oldest first — `instructionAddress`, `imagePath`, `inlined`,
/// `kind`, … —, `threads`, `images`, `breadcrumbs`, `properties`). Such a row is read through the one reader
/// of the `$exception` shape (``CapturedException/init(exceptionEvent:)``): its members are named as that event
/// names them, then what the event reader leaves out (the reason as it was, the level, the properties, the
/// breadcrumbs, whether there was a stack) is taken from the row as it is. The event rendered from it means what
/// the old version's event meant (LegacyExceptionRowTests).
extension QueuedException {
    /// The record a previous version's row holds; nil when `value` is not one.
    init?(legacyQueueValue value: CohorlyValue) {
        guard let insertId = value["insertId"]?.stringValue, let time = value["timestampMs"]?.intValue,
            let level = value["level"]?.stringValue,
            let exceptions = value["exceptions"]?.arrayValue?.compactMap(\.objectValue), let first = exceptions.first,
            let type = first["type"]?.stringValue, let text = first["value"]?.stringValue,
            let kind = first["mechanism"]?["type"]?.stringValue
        else { return nil }
        let properties = value["properties"]?.objectValue ?? [:]
        var event = properties
        event["$insert_id"] = .string(insertId)
        event["time"] = .int(time)
        event[CapturedException.levelProperty] = .string(level)
        var entry: Properties = [
            "type": .string(type), "value": .string(text), "mechanism": first["mechanism"] ?? .null,
        ]
        entry["thread_id"] = first["threadId"]
        if let frames = first["frames"]?.arrayValue {
            entry["stacktrace"] = Self.legacyStacktrace(frames, asyncStop: first["asyncStop"])
        }
        event[CapturedException.exceptionListProperty] = [.object(entry)]
        event[CapturedException.threadsProperty] = value["threads"]?.arrayValue.map { threads in
            .array(
                threads.map { thread in
                    [
                        "thread_id": thread["id"] ?? 0, "name": thread["name"] ?? "",
                        "stacktrace": Self.legacyStacktrace(
                            thread["frames"]?.arrayValue ?? [], asyncStop: thread["asyncStop"]),
                    ]
                })
        }
        event["$debug_images"] = value["images"]?.arrayValue.map { images in
            .array(
                images.map { image in
                    [
                        "code_file": image["codeFile"] ?? "", "code_id": image["codeId"] ?? "",
                        "image_addr": image["imageAddress"] ?? "", "image_size": image["imageSize"] ?? 0,
                        "arch": image["arch"] ?? "",
                    ]
                })
        }
        var exception = CapturedException(exceptionEvent: .object(event))
        exception.description = CrashDescription(
            type: type, value: text, mechanism: kind, issueName: value["issueName"]?.stringValue)
        exception.level = level
        exception.hasStack = first["frames"]?.arrayValue != nil
        exception.properties = properties
        exception.breadcrumbs = (value["breadcrumbs"]?.arrayValue ?? []).compactMap { crumb in
            crumb["timestampMs"]?.intValue.map { time in
                Breadcrumb(
                    timestampMs: UInt64(clamping: time), category: crumb["category"]?.stringValue ?? "",
                    message: crumb["message"]?.stringValue ?? "", data: crumb["data"]?.objectValue ?? [:])
            }
        }
        self.init(exception)
    }

    /// An old row's frames as the `$exception` stacktrace they were sent as (the image's whole path as `module`,
    /// so an image without a build id keeps its path).
    private static func legacyStacktrace(_ frames: [CohorlyValue], asyncStop: CohorlyValue?) -> CohorlyValue {
        let frames: [CohorlyValue] = frames.map { frame in
            var value: Properties = [
                "instruction_addr": frame["instructionAddress"] ?? .null, "in_app": frame["inApp"] ?? false,
            ]
            value["image_addr"] = frame["imageAddress"]
            value["module"] = frame["imagePath"]
            if frame["resolved"] == true {
                value["function"] = frame["function"]
                value["symbol"] = frame["symbol"]
                value["filename"] = frame["filename"]
                value["lineno"] = frame["line"]
                value["colno"] = frame["column"]
            }
            if frame["inlined"] == true { value["inline"] = true }
            value[CapturedException.frameKindKey] = frame["kind"]
            return .object(value)
        }
        var stacktrace: Properties = ["frames": .array(frames)]
        stacktrace[CapturedException.asyncStopKey] = asyncStop
        return .object(stacktrace)
    }
}
