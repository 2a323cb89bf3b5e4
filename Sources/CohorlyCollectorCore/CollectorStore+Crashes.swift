import CohorlyCrashModel
import CohorlySQLite

/// The `crash` column of the events (StoredCrash.swift): added to a database an earlier collector made, and the
/// `$exception` events it stored as PostHog properties stored again as their model when the database is opened.
extension CollectorStore {
    /// Adds the `crash` column when the events table lacks it.
    static func addCrashColumn(_ db: SQLiteDatabase) throws {
        var columns: Set<String> = []
        try db.prepare("PRAGMA table_info(events)").rows { row in
            if let name = row.text(1) { columns.insert(name) }
            return true
        }
        if !columns.contains("crash") { try db.execute("ALTER TABLE events ADD COLUMN crash TEXT") }
    }

    /// Rows of `$exception` events converted per transaction.
    static let crashMigrationBatch = 500

    /// Stores every `$exception` event held as its properties alone as its model and what the model does not say
    /// (``StoredCrash``), a batch of rows per transaction; an event whose properties are not a JSON object is left
    /// as it is. Returns how many were converted.
    @discardableResult
    static func storeCrashesAsModels(_ db: SQLiteDatabase) throws -> Int {
        var converted = 0
        var after: Int64 = 0
        while true {
            var rows: [(id: Int64, properties: String)] = []
            try db.prepare(
                "SELECT id, properties FROM events WHERE event = '$exception' AND crash IS NULL AND id > ? ORDER BY id LIMIT ?"
            ).rows([.int(after), .int(Int64(crashMigrationBatch))]) { row in
                rows.append((row.int(0), row.text(1) ?? ""))
                return true
            }
            guard let last = rows.last else { return converted }
            after = last.id
            try db.transaction {
                let update = try db.prepare("UPDATE events SET crash = ?, properties = ? WHERE id = ?")
                for row in rows {
                    guard let properties = JSONValue(json: row.properties), properties.objectValue != nil else {
                        continue
                    }
                    let columns = StoredCrash.columns(
                        CapturedException(exceptionEvent: properties), properties: properties)
                    try update.run([.text(columns.crash), .text(columns.properties), .int(row.id)])
                    converted += 1
                }
            }
        }
    }

    /// The properties' text of a stored event from its `properties` and `crash` columns: the properties as they
    /// arrived (``StoredCrash/properties(crash:properties:)``) for a crash, the column itself otherwise.
    static func propertiesJSON(_ properties: String?, crash: String?) -> String {
        guard let crash else { return properties ?? "{}" }
        return StoredCrash.properties(crash: crash, properties: properties ?? "{}")?.jsonString ?? properties ?? "{}"
    }
}
