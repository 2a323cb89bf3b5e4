import Foundation
import Testing

@testable import CohorlySQLite

/// The SQLite wrapper the client's queue and the collector's store share: values stored as given, statements
/// reused without stale bindings, transactions all or nothing, SQLite's errors passed on.
@Suite struct SQLiteDatabaseTests {
    static func table() throws -> SQLiteDatabase {
        let db = try SQLiteDatabase(path: ":memory:")
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT UNIQUE)")
        return db
    }

    /// Every row of `t` as (n, s), by id.
    static func rows(_ db: SQLiteDatabase) throws -> [(Int64, String?)] {
        var rows: [(Int64, String?)] = []
        try db.prepare("SELECT n, s FROM t ORDER BY id").rows { row in
            rows.append((row.int(0), row.text(1)))
            return true
        }
        return rows
    }

    @Test func valuesComeBackAsStored() throws {
        let db = try Self.table()
        let insert = try db.prepare("INSERT INTO t (n, s) VALUES (?, ?)")
        let texts = ["", "a\u{0}b", "é€😀", String(repeating: "x", count: 100_000), "\u{FFFD}'; DROP TABLE t; --"]
        for (index, text) in texts.enumerated() {
            try insert.run([.int(Int64(index)), .text(text)])
            #expect(db.lastInsertRowID == Int64(index + 1))
            #expect(db.changes == 1)
        }
        try insert.run([.int(.min), .null])
        try insert.run([.int(.max), .null])
        let rows = try Self.rows(db)
        #expect(rows.map(\.1) == texts + [nil, nil])
        #expect(rows.map(\.0) == [0, 1, 2, 3, 4, .min, .max])
        // The embedded NUL is stored, not cut (SQLite's own length says so).
        var length: Int64 = -1
        try db.prepare("SELECT length(CAST(s AS BLOB)) FROM t WHERE n = 1").rows { row in
            length = row.int(0)
            return false
        }
        #expect(length == 3)
    }

    @Test func aReusedStatementStartsWithNoBindings() throws {
        let db = try Self.table()
        let insert = try db.prepare("INSERT INTO t (n, s) VALUES (?, ?)")
        try insert.run([.int(1), .text("first")])
        try insert.run([.int(2)])  // the second parameter is NULL again, not "first"
        #expect(try Self.rows(db).map(\.1) == ["first", nil])
        // A query stopped early is reset: the next run starts from the first row.
        let select = try db.prepare("SELECT n FROM t ORDER BY n")
        for _ in 0..<2 {
            var seen: [Int64] = []
            try select.rows { row in
                seen.append(row.int(0))
                return false
            }
            #expect(seen == [1])
        }
    }

    @Test func aTransactionCommitsWhenItsBodyReturnsAndRollsBackWhenItThrows() throws {
        struct Abandoned: Error {}
        let db = try Self.table()
        let insert = try db.prepare("INSERT INTO t (n, s) VALUES (?, ?)")
        let count = try db.transaction {
            try insert.run([.int(1), .text("kept")])
            try insert.run([.int(2), .text("kept too")])
            return 2
        }
        #expect(count == 2)
        #expect(throws: Abandoned.self) {
            try db.transaction {
                try insert.run([.int(3), .text("dropped")])
                throw Abandoned()
            }
        }
        // A constraint failure inside rolls back the rows before it, and says why.
        do {
            try db.transaction {
                try insert.run([.int(4), .text("dropped too")])
                try insert.run([.int(5), .text("kept")])
            }
            Issue.record("a duplicate of a UNIQUE column was inserted")
        } catch let error as SQLiteError {
            #expect(error.description.contains("UNIQUE constraint failed"), "\(error)")
        }
        #expect(try Self.rows(db).map(\.0) == [1, 2])
        // The connection is usable (no transaction left open).
        try db.transaction { try insert.run([.int(6), .text("after")]) }
        #expect(try Self.rows(db).map(\.0) == [1, 2, 6])
    }

    @Test func sqliteErrorsArePassedOn() throws {
        let db = try Self.table()
        #expect(throws: SQLiteError.self) { try db.execute("NOT SQL") }
        do {
            _ = try db.prepare("SELECT missing_column FROM t")
            Issue.record("a query of a missing column was prepared")
        } catch let error as SQLiteError {
            #expect(error.description.contains("no such column"), "\(error)")
        }
        #expect(throws: SQLiteError.self) { try db.prepare("SELECT ?").run([.int(1), .int(2)]) }
        #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: "/nonexistent-directory/sub/db.sqlite") }
    }

    @Test func aDatabaseFileKeepsItsRowsAcrossConnections() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("db.sqlite").path
        do {
            let db = try SQLiteDatabase(path: path)
            try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT UNIQUE)")
            try db.transaction { try db.prepare("INSERT INTO t (n, s) VALUES (7, 'seven')").run() }
        }
        let reopened = try SQLiteDatabase(path: path)
        #expect(try Self.rows(reopened).map(\.1) == ["seven"])
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }
}
