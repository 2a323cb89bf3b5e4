import CSQLite
import CohorlyFiles

/// A failed SQLite call, with SQLite's message.
package struct SQLiteError: Error, CustomStringConvertible {
    package let description: String
}

/// One SQLite connection. Not thread-safe by itself: its owner serializes access.
package final class SQLiteDatabase {
    package let handle: OpaquePointer

    /// Opens (creating) the database at `path` (`":memory:"` for a private in-memory one). A database file is
    /// created with mode 0600 whatever the umask (SQLite gives its `-wal`, `-shm` and `-journal` files the
    /// same mode).
    package init(path: String) throws {
        if path != ":memory:" {
            do {
                try PrivateFiles.prepareDatabase(path)
            } catch {
                throw SQLiteError(description: "cannot open \(error)")
            }
        }
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close(db) }
            throw SQLiteError(description: "cannot open \(path): \(message)")
        }
        handle = db
        sqlite3_busy_timeout(db, 5000)
    }

    // close_v2: the connection closes once the last statement is finalized, whatever order owners release them.
    deinit { sqlite3_close_v2(handle) }

    package func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &error) != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(error)
            throw SQLiteError(description: message)
        }
    }

    package func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw SQLiteError(description: String(cString: sqlite3_errmsg(handle)))
        }
        return SQLiteStatement(statement, database: handle)
    }

    /// Runs `body` in one immediate transaction: committed if it returns, rolled back if it throws.
    package func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    package var changes: Int { Int(sqlite3_changes(handle)) }
    package var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
}

/// A prepared statement; reset and cleared before each use by `run`/`rows`.
package final class SQLiteStatement {
    package let statement: OpaquePointer
    package let database: OpaquePointer

    package init(_ statement: OpaquePointer, database: OpaquePointer) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    package enum Value {
        case int(Int64)
        case text(String)
        case null
    }

    package func bind(_ values: [Value]) throws {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .int(let number): status = sqlite3_bind_int64(statement, index, number)
            case .text(let text):
                status = text.withCString {
                    cly_sqlite_bind_text(statement, index, $0, Int32(text.utf8.count))
                }
            case .null: status = sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else {
                throw SQLiteError(description: String(cString: sqlite3_errmsg(database)))
            }
        }
    }

    /// Executes a statement that returns no rows.
    package func run(_ values: [Value] = []) throws {
        try bind(values)
        let status = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard status == SQLITE_DONE || status == SQLITE_ROW else {
            throw SQLiteError(description: String(cString: sqlite3_errmsg(database)))
        }
    }

    /// Executes a query, calling `row` for each result row until it returns false.
    package func rows(_ values: [Value] = [], _ row: (SQLiteStatement) throws -> Bool) throws {
        try bind(values)
        defer { sqlite3_reset(statement) }
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else {
                throw SQLiteError(description: String(cString: sqlite3_errmsg(database)))
            }
            if try !row(self) { return }
        }
    }

    package func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    package func text(_ column: Int32) -> String? {
        guard sqlite3_column_type(statement, column) != SQLITE_NULL,
            let pointer = sqlite3_column_text(statement, column)
        else { return nil }
        let length = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
    }
}
