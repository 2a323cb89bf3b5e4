import CohorlySymbols
import Foundation

/// The read side for crashes: stored `$exception` events listed, and one symbolicated against the uploaded
/// debug files (and any extra search paths), printed-ready.
///
/// The event is read by `CrashInput(exceptionEvent:)` (CrashInput+ExceptionEvent.swift).
struct CrashQueries: Sendable {
    let store: CollectorStore
    /// The uploaded debug files and executables, by build id.
    let debugFiles: DebugFileStore
    /// Further directories searched (recursively, by build id).
    let extraDirectories: [String]

    /// `GET /api/crashes`: newest first, `limit` at most, older than row `after` when given; one page read row by
    /// row (see `JSONPage`), so memory stays bounded whatever the store holds.
    func list(limit: Int, after: Int64? = nil) throws -> HTTPResponse {
        var page = JSONPage(key: "crashes")
        let query = EventQuery(event: "$exception", afterId: after, limit: limit, newestFirst: true)
        try store.forEachEvent(matching: query) { event in page.add(Self.summary(event), id: event.id) }
        return page.response()
    }

    /// One line of `GET /api/crashes`.
    static func summary(_ event: StoredEvent) -> JSONValue {
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
        // Only the store's files and what lies in the trusted directories are opened: never any path an event names.
        let locator = DebugFileLocator(searchPaths: uploaded + extraDirectories, debugRoots: [], debuginfod: nil)
        let trusted = TrustedDirectories(extraDirectories)
        locator.mayOpenCodeFile = { trusted.contains($0) }
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

    /// The crash in an `$exception` event's properties (``CrashInput/init(exceptionEvent:)``).
    static func input(from properties: JSONValue) -> CrashInput { CrashInput(exceptionEvent: properties) }
}
