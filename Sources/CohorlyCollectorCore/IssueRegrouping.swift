import CohorlyCrashModel
import CohorlySQLite
import CohorlySymbols

/// Grouping by the best names the collector has. An in-app frame the device left raw is keyed by its module
/// offset (IssueKey.swift); at ingestion it is looked up when a debug file for its build id is already uploaded
/// (or the collector searches `--debug-dir` directories). When one is uploaded later, every occurrence that
/// keyed a frame of that build id raw is keyed again with the file, and moved to the issue of its new key (created
/// when new) before the upload is answered. The issue it leaves is counted again from the occurrences it keeps,
/// and removed with its transitions when it keeps none. A moved occurrence changes no state (it is not new).
package enum IssueRegrouping {
    /// The ingestion-time lookup: a symbolicator over `exception`'s images when one of `buildIds` (the raw
    /// in-app frames' build ids) has an uploaded debug file or executable, or extra directories are searched.
    static func symbolicatorFactory(_ crashes: CrashQueries)
        -> @Sendable (CapturedException, [String]) -> ImageSymbolicator?
    {
        { exception, buildIds in
            let uploaded = buildIds.filter { id in
                [DebugFileKind.debuginfo, .executable].contains {
                    crashes.debugFiles.debugFile(buildId: id, kind: $0) != nil
                }
            }
            guard !uploaded.isEmpty || !crashes.extraDirectories.isEmpty else { return nil }
            let ids = exception.images.compactMap { DebugId.buildId(hex: $0.buildId) }
            return ImageSymbolicator(
                images: exception.images.map(LoadedImage.init(image:)), locator: crashes.locator(for: ids))
        }
    }

    /// Keys again the occurrences with raw frames of `buildId` (lowercase hex) and moves those whose key changed;
    /// returns how many moved.
    package static func regroup(buildId: String, store: CollectorStore) throws -> Int {
        var rows: [(eventId: Int64, properties: String)] = []
        try store.reading { db in
            try db.prepare(
                """
                SELECT r.event_id, e.properties, e.crash FROM issue_raw r JOIN events e ON e.id = r.event_id
                WHERE r.build_id = ? ORDER BY r.event_id
                """
            ).rows([.text(buildId)]) { row in
                rows.append((row.int(0), CollectorStore.propertiesJSON(row.text(1), crash: row.text(2))))
                return true
            }
        }
        guard !rows.isEmpty else { return 0 }
        var keyed: [(eventId: Int64, key: IssueKey, release: String?, functions: [String])] = []
        for row in rows {
            guard let properties = JSONValue(json: row.properties) else { continue }
            let crash = CapturedException(exceptionEvent: properties)
            var key = store.issues.key(crash, custom: properties[CollectorStore.NewEvent.fingerprintProperty])
            key.app = IssueApp.name(of: properties)
            keyed.append((row.eventId, key, properties["release"]?.stringValue, IssueFunctions.names(of: crash)))
        }
        return try store.lock.withLock {
            defer { store.forgetIssueWriter() }
            return try store.db.transaction {
                try IssueWriter.moveStaged(store.db)
                let writer = try IssueWriter(store.db, staged: false)
                let current = try store.db.prepare(
                    """
                    SELECT o.issue_id, i.app, i.fingerprint, o.time, o.distinct_id FROM issue_occurrences o
                    JOIN issues i ON i.id = o.issue_id WHERE o.event_id = ?
                    """)
                let forget = try store.db.prepare("DELETE FROM issue_raw WHERE event_id = ?")
                var moved = 0
                var moves: [(occurrence: IssueOccurrence, eventId: Int64)] = []
                var left: Set<Int64> = []
                for entry in keyed {
                    var old: (issue: Int64, identity: IssueKey.Identity, time: Int64, distinctId: String)?
                    try current.rows([.int(entry.eventId)]) { row in
                        old = (
                            row.int(0), IssueKey.Identity(app: row.text(1) ?? "", fingerprint: row.text(2) ?? ""),
                            row.int(3), row.text(4) ?? ""
                        )
                        return false
                    }
                    guard let old else { continue }
                    try forget.run([.int(entry.eventId)])
                    let occurrence = IssueOccurrence(
                        key: entry.key, functions: entry.functions, release: entry.release, time: old.time,
                        distinctId: old.distinctId)
                    if old.identity == entry.key.identity {
                        for id in entry.key.rawBuildIds {
                            try store.db.prepare("INSERT OR IGNORE INTO issue_raw(build_id, event_id) VALUES (?,?)")
                                .run([.text(id), .int(entry.eventId)])
                        }
                        continue
                    }
                    moves.append((occurrence, entry.eventId))
                    left.insert(old.issue)
                    moved += 1
                }
                try writer.record(moves, arrival: 0, changesState: false)
                for issue in left { try IssueRecount.recount(issue: issue, db: store.db) }
                return moved
            }
        }
    }
}

/// An upload that regroups the occurrences of its build id once it is stored (answered 201).
final class RegroupingUpload: RequestBodySink {
    private let upload: any RequestBodySink
    private let buildId: String
    private let store: CollectorStore

    init(_ upload: any RequestBodySink, buildId: String, store: CollectorStore) {
        self.upload = upload
        self.buildId = buildId.lowercased()
        self.store = store
    }

    func append(_ bytes: UnsafeRawBufferPointer) -> Bool { upload.append(bytes) }

    func finish(_ request: HTTPRequest) -> HTTPResponse? {
        let answer = upload.finish(request)
        guard answer?.status == 201, store.issues.enabled else { return answer }
        do {
            _ = try IssueRegrouping.regroup(buildId: buildId, store: store)
        } catch {
            return .error(500, "stored, but regrouping its issues failed: \(error)")
        }
        return answer
    }
}
