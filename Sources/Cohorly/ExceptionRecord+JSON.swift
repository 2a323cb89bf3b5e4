/// The queue's JSON of an exception record: one member per field (absent when nil), written and read with the
/// package's JSON value (no `Codable` machinery on the persister's and the sender's paths).
extension ExceptionRecord {
    /// The record as queue JSON.
    var json: String { queueValue.jsonString }

    /// The record `json` holds (nil when it holds none).
    init?(json: String) {
        guard let value = CohorlyValue(json: json), let record = ExceptionRecord(queueValue: value) else { return nil }
        self = record
    }

    var queueValue: CohorlyValue {
        var object: Properties = [
            "insertId": .string(insertId), "timestampMs": .int(Int(timestampMs)), "level": .string(level),
            "exceptions": .array(exceptions.map(\.queueValue)), "properties": .object(properties),
        ]
        if let issueName { object["issueName"] = .string(issueName) }
        if let threads { object["threads"] = .array(threads.map(\.queueValue)) }
        if let images { object["images"] = .array(images.map(\.queueValue)) }
        if let breadcrumbs { object["breadcrumbs"] = .array(breadcrumbs.map(\.queueValue)) }
        return .object(object)
    }

    init?(queueValue value: CohorlyValue) {
        guard let insertId = value["insertId"]?.stringValue, let time = value["timestampMs"]?.intValue,
            let level = value["level"]?.stringValue,
            let exceptions = value["exceptions"]?.arrayValue?.compactMap(Exception.init(queueValue:))
        else { return nil }
        self.init(
            insertId: insertId, timestampMs: Int64(time), level: level, issueName: value["issueName"]?.stringValue,
            exceptions: exceptions, threads: value["threads"]?.arrayValue?.compactMap(Thread.init(queueValue:)),
            images: value["images"]?.arrayValue?.compactMap(Image.init(queueValue:)),
            breadcrumbs: value["breadcrumbs"]?.arrayValue?.compactMap(Breadcrumb.init(queueValue:)),
            properties: value["properties"]?.objectValue ?? [:])
    }
}

extension ExceptionRecord.Frame {
    var queueValue: CohorlyValue {
        var object: Properties = [
            "instructionAddress": .string(instructionAddress), "inApp": .bool(inApp), "line": .int(line),
            "column": .int(column), "resolved": .bool(resolved), "inlined": .bool(inlined),
        ]
        object["imageAddress"] = imageAddress.map { .string($0) }
        object["imagePath"] = imagePath.map { .string($0) }
        object["function"] = function.map { .string($0) }
        object["symbol"] = symbol.map { .string($0) }
        object["filename"] = filename.map { .string($0) }
        object["language"] = language.map { .string($0) }
        object["kind"] = kind.map { .string($0) }
        return .object(object)
    }

    init?(queueValue value: CohorlyValue) {
        guard let address = value["instructionAddress"]?.stringValue else { return nil }
        self.init(
            instructionAddress: address, imageAddress: value["imageAddress"]?.stringValue,
            imagePath: value["imagePath"]?.stringValue, inApp: value["inApp"] == true,
            function: value["function"]?.stringValue, symbol: value["symbol"]?.stringValue,
            filename: value["filename"]?.stringValue,
            line: value["line"]?.intValue ?? 0, column: value["column"]?.intValue ?? 0,
            language: value["language"]?.stringValue, resolved: value["resolved"] == true,
            inlined: value["inlined"] == true, kind: value["kind"]?.stringValue)
    }
}

extension ExceptionRecord.Exception {
    var queueValue: CohorlyValue {
        var object: Properties = [
            "type": .string(type), "value": .string(self.value),
            "mechanism": [
                "type": .string(mechanism.type), "handled": .bool(mechanism.handled),
                "synthetic": .bool(mechanism.synthetic), "meta": .object(mechanism.meta),
            ],
        ]
        object["threadId"] = threadId.map { .int(Int($0)) }
        object["frames"] = frames.map { .array($0.map(\.queueValue)) }
        object["asyncStop"] = asyncStop.map { .string($0) }
        return .object(object)
    }

    init?(queueValue value: CohorlyValue) {
        guard let type = value["type"]?.stringValue, let text = value["value"]?.stringValue,
            let mechanism = value["mechanism"], let kind = mechanism["type"]?.stringValue
        else { return nil }
        self.init(
            type: type, value: text,
            mechanism: ExceptionRecord.Mechanism(
                type: kind, handled: mechanism["handled"] == true, synthetic: mechanism["synthetic"] == true,
                meta: mechanism["meta"]?.objectValue ?? [:]),
            threadId: value["threadId"]?.intValue.flatMap { Int32(exactly: $0) },
            frames: value["frames"]?.arrayValue?.compactMap(ExceptionRecord.Frame.init(queueValue:)),
            asyncStop: value["asyncStop"]?.stringValue)
    }
}

extension ExceptionRecord.Thread {
    var queueValue: CohorlyValue {
        var object: Properties = [
            "id": .int(Int(id)), "name": .string(name), "frames": .array(frames.map(\.queueValue)),
        ]
        object["asyncStop"] = asyncStop.map { .string($0) }
        return .object(object)
    }

    init?(queueValue value: CohorlyValue) {
        guard let id = value["id"]?.intValue.flatMap({ Int32(exactly: $0) }) else { return nil }
        self.init(
            id: id, name: value["name"]?.stringValue ?? "",
            frames: value["frames"]?.arrayValue?.compactMap(ExceptionRecord.Frame.init(queueValue:)) ?? [],
            asyncStop: value["asyncStop"]?.stringValue)
    }
}

extension ExceptionRecord.Image {
    var queueValue: CohorlyValue {
        [
            "codeFile": .string(codeFile), "codeId": .string(codeId), "debugId": .string(debugId),
            "imageAddress": .string(imageAddress), "imageSize": .int(imageSize), "arch": .string(arch),
        ]
    }

    init?(queueValue value: CohorlyValue) {
        guard let codeFile = value["codeFile"]?.stringValue, let address = value["imageAddress"]?.stringValue else {
            return nil
        }
        self.init(
            codeFile: codeFile, codeId: value["codeId"]?.stringValue ?? "",
            debugId: value["debugId"]?.stringValue ?? "",
            imageAddress: address, imageSize: value["imageSize"]?.intValue ?? 0, arch: value["arch"]?.stringValue ?? "")
    }
}

extension ExceptionRecord.Breadcrumb {
    var queueValue: CohorlyValue {
        [
            "timestampMs": .int(Int(timestampMs)), "category": .string(category), "message": .string(message),
            "data": .object(data),
        ]
    }

    init?(queueValue value: CohorlyValue) {
        guard let time = value["timestampMs"]?.intValue else { return nil }
        self.init(
            timestampMs: Int64(time), category: value["category"]?.stringValue ?? "",
            message: value["message"]?.stringValue ?? "", data: value["data"]?.objectValue ?? [:])
    }
}
