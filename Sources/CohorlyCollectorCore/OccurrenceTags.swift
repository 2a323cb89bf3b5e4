import CohorlyCrashModel
import CohorlySQLite

/// What an issue's breakdowns count besides the release and the user (which its occurrence rows hold): the
/// environment, OS, host and thread of one occurrence, read from its event once, at ingestion (or, for events
/// stored before the table existed, once when the database is opened), into `occurrence_tags` — so an issue page
/// counts them with SQL over that table, never by reading each event again.
struct OccurrenceTags: Sendable, Equatable {
    var environment: String?
    /// `Ubuntu 24.04` (distribution, else the OS name, and its version).
    var os: String?
    var host: String?
    /// The crashed thread's name (a dispatch queue's label for a thread running one's work: the recorder names it
    /// so, cly_dispatch_queue.c).
    var thread: String?

    init(environment: String? = nil, os: String? = nil, host: String? = nil, thread: String? = nil) {
        self.environment = environment
        self.os = os
        self.host = host
        self.thread = thread
    }

    /// The tags of an `$exception` event's properties: the one place that knows where they are in an event.
    init(properties: JSONValue) {
        func text(_ key: String) -> String? {
            guard let value = properties[key]?.stringValue, !value.isEmpty else { return nil }
            return String(value.prefix(Self.maximumLength))
        }
        environment = text("$environment") ?? text("environment")
        let os = [text("$os_distribution") ?? text("$os"), text("$os_version")].compactMap { $0 }
        self.os = os.isEmpty ? nil : String(os.joined(separator: " ").prefix(Self.maximumLength))
        host = text("$hostname")
        thread = text(CapturedException.threadNameProperty)
    }

    /// Characters a tag keeps (an event's values are the sender's choice).
    static let maximumLength = 200

    var isEmpty: Bool { environment == nil && os == nil && host == nil && thread == nil }

    static let schema = """
        CREATE TABLE IF NOT EXISTS occurrence_tags(
            event_id INTEGER PRIMARY KEY, environment TEXT, os TEXT, host TEXT, thread TEXT);
        """

    /// The insert a writer prepares once: event id, then the four tags.
    static let insertSQL =
        "INSERT OR REPLACE INTO occurrence_tags(event_id, environment, os, host, thread) VALUES (?,?,?,?,?)"

    /// The values of ``insertSQL`` for event `eventId`.
    func row(eventId: Int64) -> [SQLiteStatement.Value] {
        [.int(eventId)] + [environment, os, host, thread].map { $0.map { .text($0) } ?? .null }
    }

    /// Fills `occurrence_tags` for the `$exception` events a collector stored before it had the table, once (then
    /// `issue_meta` says so). Reads the events through ``CollectorStore/forEachEvent(matching:_:)``.
    static func backfill(store: CollectorStore) throws {
        let done = try store.lock.withLock {
            try store.db.execute(IssueRegrouping.metaSchema)
            var found = false
            try store.db.prepare("SELECT 1 FROM issue_meta WHERE name = 'occurrence_tags'").rows { _ in
                found = true
                return false
            }
            return found
        }
        guard !done else { return }
        var rows: [(Int64, OccurrenceTags)] = []
        var after: Int64 = 0
        while true {
            let page = try store.events(matching: EventQuery(event: "$exception", afterId: after, limit: 10_000))
            for event in page {
                let tags = JSONValue(json: event.propertiesJSON).map(OccurrenceTags.init(properties:))
                if let tags, !tags.isEmpty { rows.append((event.id, tags)) }
            }
            guard let last = page.last else { break }
            after = last.id
        }
        try store.lock.withLock {
            try store.db.transaction {
                let insert = try store.db.prepare(insertSQL.replacingOccurrences(of: "OR REPLACE", with: "OR IGNORE"))
                for (id, tags) in rows { try insert.run(tags.row(eventId: id)) }
                try store.db.execute("INSERT OR REPLACE INTO issue_meta(name, value) VALUES ('occurrence_tags', 1)")
            }
        }
    }
}
