import CohorlyCrashModel
import CohorlySymbols
import Foundation

/// The read side for crashes: stored `$exception` events listed, and one symbolicated against the uploaded
/// debug files (and any extra search paths), printed-ready.
///
/// The event is read by `CapturedException(exceptionEvent:)` (the crash model's one reading of the event shape).
struct CrashQueries: Sendable {
    let store: CollectorStore
    /// The uploaded debug files and executables, by build id.
    let debugFiles: DebugFileStore
    /// Further directories searched (recursively, by build id).
    let extraDirectories: [String]

    /// `GET /api/crashes`: newest crash time first (not arrival: a crash arrives at the next launch), `limit` at most, older than row `after` when given; one page read row by
    /// row (see `JSONPage`), so memory stays bounded whatever the store holds.
    /// `flag` keeps crashes of launches served that flag; `level` those whose `$exception_level` is that level
    /// (`fatal`: crashes, hangs the app died in, abnormal exits; `error`: handled errors and hangs it survived).
    func list(limit: Int, after: Int64? = nil, flag: FlagFilter? = nil, level: String? = nil) throws -> HTTPResponse {
        var page = JSONPage(key: "crashes")
        // With a filter the rows are read until `limit` of them match.
        let filtered = flag != nil || level != nil
        var query = EventQuery(
            event: "$exception", afterId: after, limit: filtered ? Int.max : limit, newestFirst: true)
        query.byTime = true
        // The reason `show` gives (a release trap's `Swift runtime failure: …` needs the crash site looked up).
        let reasons = CrashReasons { buildId in locator(for: [buildId]) }
        try store.forEachEvent(matching: query) { event in
            if filtered {
                let properties = JSONValue(json: event.propertiesJSON) ?? .object([:])
                if let flag, !flag.matches(properties) { return true }
                if let level, properties[CapturedException.levelProperty]?.stringValue != level { return true }
            }
            return page.add(Self.summary(event, reasons), id: event.id) && page.count < limit
        }
        return page.response()
    }

    /// One line of `GET /api/crashes`.
    static func summary(_ event: StoredEvent, _ reasons: CrashReasons) -> JSONValue {
        let properties = JSONValue(json: event.propertiesJSON) ?? .object([:])
        let crash = event.crash ?? input(from: properties)
        let exception = crash.firstListedException
        return [
            "insert_id": event.insertId.map(JSONValue.string) ?? .null,
            "time": .int(Int(event.time)), "distinct_id": .string(event.distinctId),
            "release": properties["release"] ?? .null,
            "level": properties[CapturedException.levelProperty] ?? .null,
            "mechanism": exception?.mechanismType ?? .null,
            "type": exception?.type ?? .null, "value": exception?.value ?? .null,
            "reason": .string(reasons.reason(crash)),
            "thread_name": properties[CapturedException.threadNameProperty] ?? .null,
            "received_at": .int(Int(event.receivedAt)),
        ]
    }

    /// A locator over the uploaded files of `buildIds` (as files to try) and the extra directories. Only the
    /// store's files and what lies in the trusted directories are opened: never any path an event names.
    func locator(for buildIds: [[UInt8]]) -> DebugFileLocator {
        let uploaded = buildIds.flatMap { buildId in
            [DebugFileKind.debuginfo, .executable].compactMap {
                debugFiles.debugFile(buildId: DebugId.codeId(buildId), kind: $0)?.path
            }
        }
        let locator = DebugFileLocator(searchPaths: uploaded + extraDirectories, debugRoots: [], debuginfod: nil)
        let trusted = TrustedDirectories(extraDirectories)
        locator.mayOpenCodeFile = { trusted.contains($0) }
        // A link in a trusted directory is followed only to a file inside one; the store's own files are its own.
        let stored = Set(uploaded)
        locator.mayOpenFile = { stored.contains($0) || trusted.contains($0) }
        // An uploaded build answers from its symbol cache (DebugFileStore+SymbolCache.swift).
        locator.symbolCache = { [debugFiles] in debugFiles.symbolCache(buildId: DebugId.codeId($0))?.path }
        return locator
    }

    /// A prefix of an insert id that more than one crash has.
    struct AmbiguousPrefix: Error, CustomStringConvertible {
        let prefix: String
        let matches: [String]
        var description: String {
            "insert id prefix '\(prefix)' is ambiguous: it matches \(matches.prefix(5).joined(separator: ", "))"
                + (matches.count > 5 ? ", …" : "")
        }
    }

    /// The crash whose insert id is `insertId`, else the only one whose insert id starts with it.
    func event(insertId: String) throws -> StoredEvent? {
        let exact = EventQuery(event: "$exception", insertId: insertId, limit: 1)
        if let event = try store.events(matching: exact).first { return event }
        var query = EventQuery(event: "$exception", limit: 6)
        query.insertIdPrefix = insertId
        let matches = try store.events(matching: query)
        guard matches.count < 2 else {
            throw AmbiguousPrefix(prefix: insertId, matches: matches.compactMap(\.insertId))
        }
        return matches.first
    }

    /// `GET /api/crashes/<insert_id>` (or a unique prefix of it): nil when there is no such crash; throws
    /// ``AmbiguousPrefix`` when several crashes match the prefix.
    func show(insertId: String) throws -> JSONValue? {
        guard let event = try event(insertId: insertId), event.insertId != nil else { return nil }
        return show(event)
    }

    /// The answer of `GET /api/crashes/<insert_id>` for the stored `$exception` event `event` (also the latest
    /// occurrence in `GET /api/issues/<id>`).
    func show(_ event: StoredEvent) -> JSONValue {
        let properties = JSONValue(json: event.propertiesJSON) ?? .object([:])
        let crash = symbolicate(event)
        let encoded = (try? JSONEncoder().encode(crash)).flatMap { JSONValue(bytes: Array($0)) } ?? .null
        return [
            "insert_id": event.insertId.map(JSONValue.string) ?? .null, "time": .int(Int(event.time)),
            "distinct_id": .string(event.distinctId),
            "release": properties["release"] ?? .null, "dist": properties["dist"] ?? .null,
            "os": properties["$os_distribution"] ?? properties["$os"] ?? .null,
            "os_version": properties["$os_version"] ?? .null, "arch": properties["$arch"] ?? .null,
            "crash": encoded, "breadcrumbs": properties[CapturedException.breadcrumbsProperty] ?? .null,
            "received_at": .int(Int(event.receivedAt)),
        ]
    }

    /// The crash of a stored `$exception` event (its model, ``StoredEvent/crash``), symbolicated against the
    /// uploaded debug files and the extra directories (what `show` and the web pages print).
    func symbolicate(_ event: StoredEvent) -> SymbolicatedCrash {
        symbolicate(event.crash ?? Self.input(from: .object([:])))
    }

    /// `input` symbolicated against the uploaded debug files and the extra directories.
    func symbolicate(_ input: CapturedException) -> SymbolicatedCrash {
        let buildIds = input.images.compactMap { DebugId.buildId(hex: $0.buildId) }
        return CrashSymbolicator.symbolicate(input, locator: locator(for: buildIds))
    }

    /// The crash in an `$exception` event's properties (``CapturedException/init(exceptionEvent:)``).
    static func input(from properties: JSONValue) -> CapturedException { CapturedException(exceptionEvent: properties) }
}
