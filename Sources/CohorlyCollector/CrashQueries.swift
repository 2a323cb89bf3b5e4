import CohorlySymbols
import Foundation

/// The read side for crashes: stored `$exception` events listed, and one symbolicated against the uploaded
/// debug files (and any extra search paths), printed-ready.
///
/// The event shape is CohorlyCrash's (`ExceptionEvent.swift`): `$exception_list[0]` with type, value,
/// mechanism and raw frames oldest first, `$exception_threads`, `$debug_images` with code ids and load addresses.
struct CrashQueries: Sendable {
    let store: CollectorStore
    /// The uploaded debug files and executables, by build id.
    let debugFiles: DebugFileStore
    /// Further directories searched (recursively, by build id).
    let extraDirectories: [String]

    /// `GET /api/crashes`: newest first.
    func list(limit: Int) throws -> JSONValue {
        let events = try store.events(matching: EventQuery(event: "$exception", limit: 1_000_000))
        let summaries: [JSONValue] = events.reversed().prefix(limit).map { event in
            let properties = JSONValue(json: event.propertiesJSON) ?? .object([:])
            let exception = properties["$exception_list"]?.arrayValue?.first
            return [
                "insert_id": event.insertId.map(JSONValue.string) ?? .null,
                "time": .int(Int(event.time)), "distinct_id": .string(event.distinctId),
                "release": properties["release"] ?? .null,
                "type": exception?["type"] ?? .null, "value": exception?["value"] ?? .null,
                "received_at": .int(Int(event.receivedAt)),
            ]
        }
        return ["crashes": .array(summaries), "count": .int(summaries.count)]
    }

    /// `GET /api/crashes/<insert_id>`: nil when there is no such crash.
    func show(insertId: String) throws -> JSONValue? {
        guard
            let event = try store.events(matching: EventQuery(event: "$exception", insertId: insertId, limit: 1))
                .first
        else { return nil }
        let properties = JSONValue(json: event.propertiesJSON) ?? .object([:])
        let input = Self.input(from: properties)
        // The uploaded files of the crash's modules come first (as files to try), then the extra directories.
        let uploaded = input.images.compactMap(\.buildId).flatMap { buildId in
            [DebugFileKind.debuginfo, .executable].compactMap {
                debugFiles.debugFile(buildId: DebugId.codeId(buildId), kind: $0)?.path
            }
        }
        let locator = DebugFileLocator(searchPaths: uploaded + extraDirectories, debugRoots: [], debuginfod: nil)
        let crash = CrashSymbolicator.symbolicate(input, locator: locator)
        let encoded = (try? JSONEncoder().encode(crash)).flatMap { JSONValue(bytes: Array($0)) } ?? .null
        return [
            "insert_id": .string(insertId), "time": .int(Int(event.time)), "distinct_id": .string(event.distinctId),
            "release": properties["release"] ?? .null, "dist": properties["dist"] ?? .null,
            "os": properties["$os_distribution"] ?? properties["$os"] ?? .null,
            "os_version": properties["$os_version"] ?? .null, "arch": properties["$arch"] ?? .null,
            "crash": encoded,
        ]
    }

    /// The crash in an `$exception` event's properties.
    static func input(from properties: JSONValue) -> CrashInput {
        let exception = properties["$exception_list"]?.arrayValue?.first
        let images = (properties["$debug_images"]?.arrayValue ?? []).compactMap { image -> LoadedImage? in
            guard let path = image["code_file"]?.stringValue, let base = hex(image["image_addr"]) else { return nil }
            // Events come from the network: a negative or absurd size is read as unknown, never trapped on.
            let size = image["image_size"]?.intValue.flatMap { UInt64(exactly: $0) } ?? hex(image["image_size"]) ?? 0
            let buildId = image["code_id"]?.stringValue.flatMap { $0.isEmpty ? nil : DebugId.buildId(hex: $0) }
            return LoadedImage(path: path, base: base, size: size, buildId: buildId)
        }
        var threads = [
            thread(exception?["stacktrace"], tid: exception?["thread_id"]?.intValue, name: nil, crashed: true)
        ]
        for other in properties["$exception_threads"]?.arrayValue ?? [] {
            threads.append(
                thread(
                    other["stacktrace"], tid: other["thread_id"]?.intValue, name: other["name"]?.stringValue,
                    crashed: false))
        }
        var input = CrashInput(threads: threads, images: images)
        let type = exception?["type"]?.stringValue
        let value = exception?["value"]?.stringValue
        let mechanism = exception?["mechanism"]
        switch mechanism?["type"]?.stringValue {
        case "swift": input.message = [type, value].compactMap { $0 }.joined(separator: ": ")
        case "cxx":
            input.cxxType = type
            input.cxxWhat = value
        default: input.signalDescription = [type, value].compactMap { $0 }.joined(separator: ": ")
        }
        let signal = mechanism?["meta"]?["signal"]
        input.signalName = signal?["name"]?.stringValue
        input.signalNumber = signal?["number"]?.intValue
        input.signalCode = signal?["code"]?.intValue
        input.faultAddress = signal?["address"]?.stringValue
        input.mechanism = mechanism?["type"]?.stringValue
        input.executable = properties["$exception_executable"]?.stringValue
        if case .bool(false)? = properties["$exception_report_complete"] { input.complete = false }
        return input
    }

    /// A thread from a raw stacktrace (frames oldest first → innermost first).
    private static func thread(_ stacktrace: JSONValue?, tid: Int?, name: String?, crashed: Bool) -> CrashInput.Thread {
        let frames = stacktrace?["frames"]?.arrayValue ?? []
        let addresses = frames.reversed().compactMap { hex($0["instruction_addr"]) }
        return CrashInput.Thread(tid: tid, name: name, crashed: crashed, truncated: false, addresses: addresses)
    }

    private static func hex(_ value: JSONValue?) -> UInt64? {
        guard var text = value?.stringValue else { return nil }
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text.removeFirst(2) }
        return UInt64(text, radix: 16)
    }
}
