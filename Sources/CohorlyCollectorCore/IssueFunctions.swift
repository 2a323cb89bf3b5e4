import CohorlyCrashModel
import CohorlySQLite

/// The function index of issues: which functions the frames of an issue's occurrences name, for the search's
/// `function:` term (IssueSearch+SQL.swift), filled as occurrences are filed (IssueWriter.swift) rather than found
/// by reading every event's frames at search time.
///
/// - `issue_function_names`: each function name once (a search reads these few thousand names, not a row per
///   issue and function);
/// - `issue_functions`: (name, issue) pairs.
///
/// An issue keeps the functions of occurrences that regrouping moved away from it, until it is removed.
enum IssueFunctions {
    static let schema = """
        CREATE TABLE IF NOT EXISTS issue_function_names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
        CREATE TABLE IF NOT EXISTS issue_functions(
            function_id INTEGER NOT NULL, issue_id INTEGER NOT NULL, PRIMARY KEY(function_id, issue_id)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS issue_functions_issue ON issue_functions(issue_id);
        """

    /// Most functions kept of one occurrence.
    static let maxPerOccurrence = 256
    /// Longest function name kept, in UTF-8 bytes (longer names are left out).
    static let maxNameBytes = 1024

    /// The functions the frames of a crash's subject thread name (each frame's function as its stack trace
    /// names it — the short form when there is one —, inlined calls too), each once, in the order met. Read from
    /// the model decoded at the edge, not from the event's JSON again.
    static func names(of crash: CapturedException) -> [String] {
        var seen: Set<String> = []
        var names: [String] = []
        for frame in crash.subject?.logicalFrames ?? [] {
            for symbol in frame.symbols {
                guard let name = symbol.shortFunction ?? symbol.function, !name.isEmpty,
                    name.utf8.count <= maxNameBytes, seen.insert(name).inserted
                else { continue }
                names.append(name)
                if names.count >= maxPerOccurrence { return names }
            }
        }
        return names
    }
}

/// Writes the function index (the store's lock held, inside the transaction that files the occurrences), keeping
/// which names and (name, issue) pairs are stored, so a known issue's frames cost no statement.
final class IssueFunctionWriter {
    private let insertName: SQLiteStatement
    private let findName: SQLiteStatement
    private let link: SQLiteStatement
    private var nameIds: [String: Int64] = [:]
    private var pairs: Set<Pair> = []
    /// The names last linked to each issue: an occurrence naming the same ones (the usual case: a crash site's
    /// frames) costs one comparison, not a lookup per name.
    private var linked: [Int64: [String]] = [:]

    private struct Pair: Hashable {
        var function: Int64
        var issue: Int64
    }

    init(_ db: SQLiteDatabase) throws {
        insertName = try db.prepare("INSERT OR IGNORE INTO issue_function_names(name) VALUES (?)")
        findName = try db.prepare("SELECT id FROM issue_function_names WHERE name = ?")
        link = try db.prepare("INSERT OR IGNORE INTO issue_functions(function_id, issue_id) VALUES (?,?)")
    }

    /// Records that issue `issue` has frames naming `names`.
    func add(_ names: [String], issue: Int64) throws {
        guard linked[issue] != names else { return }
        for name in names {
            let id = try nameId(name)
            guard pairs.insert(Pair(function: id, issue: issue)).inserted else { continue }
            if pairs.count >= IssueWriter.cacheLimit { pairs = [Pair(function: id, issue: issue)] }
            try link.run([.int(id), .int(issue)])
        }
        if linked.count >= IssueWriter.cacheLimit { linked.removeAll() }
        linked[issue] = names
    }

    private func nameId(_ name: String) throws -> Int64 {
        if let id = nameIds[name] { return id }
        try insertName.run([.text(name)])
        var id: Int64 = 0
        try findName.rows([.text(name)]) { row in
            id = row.int(0)
            return false
        }
        if nameIds.count >= IssueWriter.cacheLimit { nameIds.removeAll() }
        nameIds[name] = id
        return id
    }
}
