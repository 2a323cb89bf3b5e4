import CohorlySQLite
import Foundation

/// Feature flag definitions, one row per key (`flags` table: the definition's JSON and when it was last set).
extension CollectorStore {
    static let flagsSchema = """
        CREATE TABLE IF NOT EXISTS flags(
            key TEXT PRIMARY KEY, definition TEXT NOT NULL, updated_at INTEGER NOT NULL);
        """

    /// Stores `definition` under its key (replacing one stored before); true when it replaced one.
    @discardableResult
    package func setFlag(_ definition: FlagDefinition, now: Int64) throws -> Bool {
        try lock.withLock {
            let replaced = try flagRow(definition.key) != nil
            try db.prepare("INSERT OR REPLACE INTO flags(key, definition, updated_at) VALUES (?,?,?)").run([
                .text(definition.key), .text(definition.json.jsonString), .int(now),
            ])
            return replaced
        }
    }

    /// The flag stored under `key`.
    package func flag(_ key: String) throws -> FlagDefinition? {
        try lock.withLock { try flagRow(key) }
    }

    /// Every stored flag, by key.
    package func flags() throws -> [FlagDefinition] {
        try lock.withLock {
            var result: [FlagDefinition] = []
            try db.prepare("SELECT definition FROM flags ORDER BY key").rows { row in
                if let definition = Self.definition(row.text(0)) { result.append(definition) }
                return true
            }
            return result
        }
    }

    /// Removes the flag stored under `key`; false when there was none.
    package func deleteFlag(_ key: String) throws -> Bool {
        try lock.withLock {
            try db.prepare("DELETE FROM flags WHERE key = ?").run([.text(key)])
            return db.changes > 0
        }
    }

    /// Lock held.
    private func flagRow(_ key: String) throws -> FlagDefinition? {
        var found: FlagDefinition?
        try db.prepare("SELECT definition FROM flags WHERE key = ?").rows([.text(key)]) { row in
            found = Self.definition(row.text(0))
            return false
        }
        return found
    }

    /// A stored definition (rows are only written validated; one that no longer parses is skipped).
    private static func definition(_ text: String?) -> FlagDefinition? {
        guard let text, let json = JSONValue(json: text) else { return nil }
        return try? FlagDefinition(json: json)
    }
}
