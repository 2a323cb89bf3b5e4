import CohorlySQLite

/// The text of each issue that the search's words look in (IssueSearch+SQL.swift): its title, message and culprit
/// in one narrow row, `issue_texts`, so a word reads 100,000 short rows rather than the whole `issues` table (half
/// the time in scripts/bench-collector's search benchmark). Written when an issue is created (IssueWriter.swift),
/// filled again when a regrouping renames issues, removed with its issue (IssueRecount.swift).
enum IssueTexts {
    static let schema = """
        CREATE TABLE IF NOT EXISTS issue_texts(issue_id INTEGER PRIMARY KEY, text TEXT NOT NULL);
        """

    /// The text of an issue: title, message and culprit, a line each.
    static let expression = "title || char(10) || subtitle || char(10) || culprit"

    /// Writes the text of every issue again (the store's lock held, inside a transaction).
    static func refill(_ db: SQLiteDatabase) throws {
        try db.execute(
            "DELETE FROM issue_texts; INSERT INTO issue_texts(issue_id, text) SELECT id, \(expression) FROM issues")
    }

    /// Fills the texts of a database whose issues have none (written before the table existed).
    static func fillIfMissing(_ db: SQLiteDatabase) throws {
        var missing = false
        try db.prepare(
            "SELECT 1 FROM issues WHERE NOT EXISTS (SELECT 1 FROM issue_texts) LIMIT 1"
        ).rows { _ in
            missing = true
            return false
        }
        if missing { try refill(db) }
    }
}
