import CohorlyCollectorAPI
import CohorlySQLite

/// Apps: every issue belongs to the app its occurrences came from, and the app joins the issue key
/// (IssueKey.swift), so two apps' crashes at one site are two issues, each with a short id numbered in its app
/// (``IssueShortId``: `MYAPP-12`). Issues of a collector from before apps are moved into the table that keys by
/// app when the database opens (``migrate(_:)``), and then keyed again with their occurrences' apps
/// (IssueRegrouping+Upgrade.swift).
enum IssueApp {
    /// Longest app name kept, in characters (the rest is cut).
    static let maxName = 200

    /// The app of an event's properties: the project its wire was addressed to
    /// (``CollectorStore/NewEvent/projectProperty``, or the key events stored before it was named for any wire
    /// carry it under), else the `$app_name` the SDK sends; empty when none is there.
    static func name(of properties: JSONValue) -> String {
        let name =
            (properties[CollectorStore.NewEvent.projectProperty] ?? properties[formerProjectProperty])?.stringValue
            ?? properties["$app_name"]?.stringValue ?? ""
        return name.count > maxName ? String(name.prefix(maxName)) : name
    }

    /// Where events stored by earlier collectors keep their wire's project (only Sentry envelopes had one):
    /// still read, so an existing database keys its issues as before.
    static let formerProjectProperty = "$sentry_project_id"

    /// The `issues` table, keyed by app and fingerprint, named `name`.
    static func table(_ name: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(name)(
            id INTEGER PRIMARY KEY AUTOINCREMENT, app TEXT NOT NULL DEFAULT '', fingerprint TEXT NOT NULL,
            title TEXT NOT NULL, subtitle TEXT NOT NULL, level TEXT NOT NULL, mechanism TEXT NOT NULL,
            state TEXT NOT NULL, resolved_in_release TEXT, resolved_at INTEGER, muted_until INTEGER, muted_for INTEGER,
            first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, occurrences INTEGER NOT NULL,
            users INTEGER NOT NULL, first_release TEXT, last_release TEXT, latest_event_id INTEGER NOT NULL,
            culprit TEXT NOT NULL DEFAULT '', short_id TEXT, UNIQUE(app, fingerprint))
        """
    }

    /// What keys issues by app: the indexes of `issues` by app and by short id, and the last number of each
    /// short-id prefix (numbers are never given twice, even when an issue is removed).
    static let schema = """
        CREATE INDEX IF NOT EXISTS issues_app ON issues(app, last_seen);
        CREATE UNIQUE INDEX IF NOT EXISTS issues_short_id ON issues(short_id);
        CREATE TABLE IF NOT EXISTS issue_short_ids(prefix TEXT PRIMARY KEY, last INTEGER NOT NULL) WITHOUT ROWID;
        """

    /// Moves the issues of a collector from before apps (a table unique by fingerprint alone, without `app` and
    /// `short_id`) into the table keyed by app, keeping every id and the id sequence; their app is empty until the
    /// key's upgrade names it. Nothing to do for a new database or one already moved.
    static func migrate(_ db: SQLiteDatabase) throws {
        var columns: Set<String> = []
        try db.prepare("PRAGMA table_info(issues)").rows { row in
            if let name = row.text(1) { columns.insert(name) }
            return true
        }
        guard !columns.isEmpty, !columns.contains("app") else { return }
        try db.transaction {
            if !columns.contains("culprit") {
                try db.execute("ALTER TABLE issues ADD COLUMN culprit TEXT NOT NULL DEFAULT ''")
            }
            var sequence: Int64 = 0
            try db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'issues'").rows { row in
                sequence = row.int(0)
                return false
            }
            let copied = """
                id, fingerprint, title, subtitle, level, mechanism, state, resolved_in_release, resolved_at,
                muted_until, muted_for, first_seen, last_seen, occurrences, users, first_release, last_release,
                latest_event_id, culprit
                """
            try db.execute(
                """
                \(table("issues_by_app"));
                INSERT INTO issues_by_app(\(copied)) SELECT \(copied) FROM issues;
                DROP TABLE issues;
                ALTER TABLE issues_by_app RENAME TO issues;
                """)
            try db.prepare("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'issues'")
                .run([.int(sequence)])
            try db.prepare(
                "INSERT INTO sqlite_sequence(name, seq) SELECT 'issues', ? WHERE NOT EXISTS"
                    + " (SELECT 1 FROM sqlite_sequence WHERE name = 'issues')"
            ).run([.int(sequence)])
        }
    }

    /// Gives the issues without a short id theirs, in id order (the store's lock held, inside a transaction).
    static func assignShortIds(_ db: SQLiteDatabase) throws {
        var pending: [(id: Int64, app: String)] = []
        try db.prepare("SELECT id, app FROM issues WHERE short_id IS NULL ORDER BY id").rows { row in
            pending.append((row.int(0), row.text(1) ?? ""))
            return true
        }
        guard !pending.isEmpty else { return }
        let numbers = try ShortIdNumbers(db)
        let set = try db.prepare("UPDATE issues SET short_id = ? WHERE id = ?")
        for issue in pending { try set.run([.text(try numbers.next(app: issue.app)), .int(issue.id)]) }
    }
}

extension CollectorStore.NewEvent {
    /// The property a wire records the project it was addressed to under, when its address names one (a Sentry
    /// envelope's DSN project, `42` of `/api/42/envelope/`): it names the event's app before `$app_name`
    /// (``IssueApp``), so one SDK's projects are apps of their own.
    package static let projectProperty = "$ingestion_project_id"
}

/// Hands out short ids: the next number of an app's prefix.
struct ShortIdNumbers {
    private let next: SQLiteStatement

    init(_ db: SQLiteDatabase) throws {
        next = try db.prepare(
            "INSERT INTO issue_short_ids(prefix, last) VALUES (?, 1)"
                + " ON CONFLICT(prefix) DO UPDATE SET last = last + 1 RETURNING last")
    }

    /// The next short id of `app` (`MYAPP-13`).
    func next(app: String) throws -> String {
        let prefix = IssueShortId.prefix(app: app)
        var number: Int64 = 0
        try next.rows([.text(prefix)]) { row in
            number = row.int(0)
            return false
        }
        return prefix + "-" + String(number)
    }
}
