import CohorlyCrashModel
import CohorlySQLite
import CohorlySymbols
import Foundation

/// The issue tables beside the events, written in the same transaction as the events they group (so an event is
/// never stored without its issue, nor an issue counted for an event a rolled-back batch dropped):
///
/// - `issues`: one row per app and fingerprint (IssueApp.swift) with its counters (so a list reads 1,000 rows, not 100,000), its state and
///   the mute's end. Times in unix milliseconds (crash time, not arrival).
/// - `issue_occurrences`: event id → issue, with the crash time, distinct id and release (per-day and per-release
///   counts, the occurrence list, and what regrouping moves), indexed by (issue, time).
/// - `issue_occurrences_new`: the same rows as they arrive, without that index, until a few thousand are moved
///   into `issue_occurrences` at once (IssueWriter.swift) and counted into their issues then (IssuePending.swift);
///   every read of occurrences or counters reads both.
/// - `issue_users`, `issue_releases`: distinct users and occurrences per release of each issue (the releases
///   of moved rows; staged ones are counted as they are read).
/// - `issue_release_order`: every release in the order the collector first saw it (ReleaseOrder.swift).
/// - `issue_raw`: occurrences with in-app frames keyed by module offset, by build id (IssueRegrouping.swift).
/// - `issue_transitions`: every state change with its time (unix seconds), release and note.
/// - `occurrence_tags`: each occurrence's environment, OS, host and thread (OccurrenceTags.swift).
/// - `issue_function_names`, `issue_functions`: the functions each issue's frames name (IssueFunctions.swift).
/// - `issue_texts`: each issue's title, message and culprit, which the search's words read (IssueTexts.swift).
extension CollectorStore {
    static let issuesSchema = """
        \(IssueApp.table("issues"));
        \(IssueApp.schema)
        \(IssueFunctions.schema)
        \(IssueTexts.schema)
        CREATE INDEX IF NOT EXISTS issues_last_seen ON issues(last_seen);
        CREATE TABLE IF NOT EXISTS issue_occurrences(
            event_id INTEGER PRIMARY KEY, issue_id INTEGER NOT NULL, time INTEGER NOT NULL,
            distinct_id TEXT NOT NULL, release TEXT);
        CREATE INDEX IF NOT EXISTS issue_occurrences_issue ON issue_occurrences(issue_id, time);
        CREATE TABLE IF NOT EXISTS issue_occurrences_new(
            event_id INTEGER PRIMARY KEY, issue_id INTEGER NOT NULL, time INTEGER NOT NULL,
            distinct_id TEXT NOT NULL, release TEXT, flags INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE IF NOT EXISTS issue_users(
            issue_id INTEGER NOT NULL, distinct_id TEXT NOT NULL, PRIMARY KEY(issue_id, distinct_id)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS issue_users_user ON issue_users(distinct_id);
        CREATE TABLE IF NOT EXISTS issue_releases(
            issue_id INTEGER NOT NULL, release TEXT NOT NULL, count INTEGER NOT NULL,
            PRIMARY KEY(issue_id, release)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS issue_releases_release ON issue_releases(release);
        CREATE TABLE IF NOT EXISTS issue_release_order(rank INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE);
        CREATE TABLE IF NOT EXISTS issue_raw(
            build_id TEXT NOT NULL, event_id INTEGER NOT NULL, PRIMARY KEY(build_id, event_id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS issue_transitions(
            id INTEGER PRIMARY KEY AUTOINCREMENT, issue_id INTEGER NOT NULL, from_state TEXT NOT NULL,
            to_state TEXT NOT NULL, time INTEGER NOT NULL, release TEXT, note TEXT);
        CREATE INDEX IF NOT EXISTS issue_transitions_issue ON issue_transitions(issue_id);
        """
}

extension CollectorStore {
    /// Creates the issue tables, and adds what a collector of an earlier version did not have.
    static func createIssueTables(_ db: SQLiteDatabase) throws {
        try IssueApp.migrate(db)
        try db.execute(issuesSchema)
        try db.execute(OccurrenceTags.schema)
        try IssuePending.upgrade(db)
    }
}

/// One `$exception` about to be stored, with its issue key.
package struct IssueOccurrence: Sendable {
    var key: IssueKey
    /// The functions its frames name (IssueFunctions.swift).
    var functions: [String] = []
    /// Its `release` property.
    var release: String?
    /// Crash time, unix ms.
    var time: Int64
    var distinctId: String
    /// Its environment, OS, host and thread for the issue's breakdowns (empty: none written, as when regrouping).
    var tags = OccurrenceTags()
}

/// How the store groups: on (the default) or off (`cohorly serve --no-issues`, the benchmark's baseline), and how
/// frames the device left raw are looked up at ingestion (set by ``Collector``: the uploaded debug files).
package final class IssueGrouping: @unchecked Sendable {
    private let lock = NSLock()
    private var on = true
    private var makeSymbolicator: (@Sendable (CapturedException, [String]) -> ImageSymbolicator?)?

    /// Sets both (before the server starts).
    func configure(enabled: Bool, symbolicator: (@Sendable (CapturedException, [String]) -> ImageSymbolicator?)?) {
        lock.withLock {
            on = enabled
            makeSymbolicator = symbolicator
        }
    }

    package var enabled: Bool { lock.withLock { on } }

    /// A symbolicator for the raw in-app frames of `exception` (their build ids `buildIds`); nil when none is
    /// raw or no debug file is at hand for them.
    func symbolicator(for exception: CapturedException, buildIds: [String]) -> ImageSymbolicator? {
        guard !buildIds.isEmpty else { return nil }
        return lock.withLock { makeSymbolicator }?(exception, buildIds)
    }

    /// The occurrence each event stands for (nil: not an `$exception`, or grouping is off). Runs before the
    /// store's lock is taken: parsing and any symbolication never hold up other writers.
    func occurrences(for events: [CollectorStore.NewEvent]) -> [IssueOccurrence?] {
        guard enabled, events.contains(where: { $0.event == "$exception" }) else {
            return Array(repeating: nil, count: events.count)
        }
        return events.map { event in
            guard let (crash, fingerprint) = event.decodedCrash else { return nil }
            let properties = event.properties ?? JSONValue(json: event.propertiesJSON)
            var key = key(crash, custom: fingerprint)
            key.app = properties.map(IssueApp.name(of:)) ?? ""
            return IssueOccurrence(
                key: key, functions: IssueFunctions.names(of: crash),
                release: crash.properties["release"]?.stringValue, time: event.time, distinctId: event.distinctId,
                tags: properties.map(OccurrenceTags.init(properties:)) ?? OccurrenceTags())
        }
    }

    /// The issue key of `crash` (decoded at the edge, or read from a stored event) with the fingerprint its
    /// sender chose, if any: its raw in-app frames looked up in the uploaded debug files when there are some.
    func key(_ crash: CapturedException, custom: JSONValue?) -> IssueKey {
        let key = IssueKey(crash, custom: custom)
        guard !key.rawBuildIds.isEmpty else { return key }
        // Frames the device left raw: looked up in the uploaded debug files if any.
        let grouped = IssueKey.grouped(crash)
        guard let symbolicator = symbolicator(for: grouped, buildIds: key.rawBuildIds) else { return key }
        return IssueKey(grouped, custom: custom, symbolicator: symbolicator)
    }
}
