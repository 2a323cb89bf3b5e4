import CohorlyCollectorAPI
import CohorlySQLite

/// An ``IssueFilter`` (its fields and its search, Sources/CohorlyCollectorAPI/IssueSearch.swift) as the condition
/// of a list: SQL over the columns of ``IssuePending/issues(where:pendingFilter:)`` whose every value is a bound
/// parameter — nothing a user typed is ever part of the SQL text.
struct IssueFilterSQL {
    /// The conditions, all of which must hold.
    var clauses: [String] = []
    /// The values of their `?`s, in order.
    var values: [SQLiteStatement.Value] = []

    /// The condition of `filter`; release names are read from `db` (``releaseNames(_:_:)``).
    init(_ filter: IssueFilter, db: SQLiteDatabase) throws {
        if let state = filter.state { add("state = ?", [.text(state.rawValue)]) }
        if let level = filter.level { add("level = ?", [.text(level)]) }
        if let app = filter.app { add("app = ?", [.text(app)]) }
        if let release = filter.release { try addRelease(release, db) }
        if let since = filter.since {
            add("last_seen >= ?", [.int(since.multipliedReportingOverflow(by: 1000).overflow ? .max : since * 1000)])
        }
        // Words alone are found in the texts table in one pass; beside other terms, each issue those leave reads
        // its own text (a common word would otherwise list every issue before the other terms narrow it).
        let wordsAlone =
            filter.search.terms.allSatisfy { if case .text = $0 { true } else { false } }
            && clauses.isEmpty
        // Words last: SQLite checks the terms in the order given, and the others are cheaper to refuse a row by.
        let words = filter.search.terms.filter { if case .text = $0 { true } else { false } }
        for term in filter.search.terms where !words.contains(term) { try add(term, db, wordsAlone: wordsAlone) }
        for term in words { try add(term, db, wordsAlone: wordsAlone) }
    }

    /// The `WHERE …` of the conditions (empty without any).
    var whereSQL: String { clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ") }

    private mutating func add(_ clause: String, _ bound: [SQLiteStatement.Value]) {
        clauses.append(clause)
        values += bound
    }

    private mutating func add(_ term: IssueSearch.Term, _ db: SQLiteDatabase, wordsAlone: Bool) throws {
        switch term {
        case .text(let text):
            add(
                wordsAlone
                    ? "id IN (SELECT issue_id FROM issue_texts WHERE text LIKE ? ESCAPE '\\')"
                    : "(SELECT text FROM issue_texts WHERE issue_id = id) LIKE ? ESCAPE '\\'",
                [.text("%" + Self.escapedForLike(text) + "%")])
        case .state(let states): add(Self.oneOf("state", states.count), states.map { .text($0) })
        case .level(let levels): add(Self.oneOf("level", levels.count), levels.map { .text($0) })
        case .app(let apps): add(Self.oneOf("app", apps.count), apps.map { .text($0) })
        case .release(let release): try addRelease(release, db)
        case .user(let user):
            add("id IN (SELECT issue_id FROM issue_users WHERE distinct_id = ?)", [.text(user)])
        case .function(let name):
            add(
                """
                id IN (SELECT issue_id FROM issue_functions WHERE function_id IN
                    (SELECT id FROM issue_function_names WHERE instr(name, ?) > 0))
                """, [.text(name)])
        case .seen(let field, let comparison, let time):
            add("\(field.rawValue) \(comparison.rawValue) ?", [.int(time)])
        }
    }

    /// Issues with an occurrence (counted, or still staged) from a release `pattern` names.
    private mutating func addRelease(_ pattern: String, _ db: SQLiteDatabase) throws {
        let names = JSONValue.array(try Self.releaseNames(pattern, db).map { .string($0) }).jsonString
        add(
            """
            id IN (SELECT issue_id FROM issue_releases WHERE release IN (SELECT value FROM json_each(?))
                UNION SELECT issue_id FROM issue_occurrences_new WHERE release IN (SELECT value FROM json_each(?)))
            """, [.text(names), .text(names)])
    }

    /// The releases the collector has seen (`issue_release_order`: a few hundred names, not a row per
    /// occurrence) that `pattern` names (``IssueSearch/releaseMatches(_:_:)``).
    static func releaseNames(_ pattern: String, _ db: SQLiteDatabase) throws -> [String] {
        var names: [String] = []
        try db.prepare("SELECT name FROM issue_release_order WHERE name IS NOT NULL").rows { row in
            if let name = row.text(0), IssueSearch.releaseMatches(name, pattern) { names.append(name) }
            return true
        }
        return names
    }

    /// `column IN (?, ?, …)` for `count` values.
    static func oneOf(_ column: String, _ count: Int) -> String {
        "\(column) IN (" + Array(repeating: "?", count: max(1, count)).joined(separator: ", ") + ")"
    }

    /// `text` with LIKE's wildcards and the escape character escaped (`\`).
    static func escapedForLike(_ text: String) -> String {
        var out = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
