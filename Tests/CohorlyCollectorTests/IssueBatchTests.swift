import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The issue writer stages a request's occurrence rows and counts them into their issues when it moves them into
/// the indexed table in bulk (reads add the staged rows meanwhile): the counts, the first and last release,
/// the latest occurrence, the per-day counts and the occurrence pages come out as if every occurrence had been
/// filed one by one, on either side of a move.
@Suite struct IssueBatchTests {
    /// A `$exception` of crash site `site` by `user` at `time` (unix ms), from `release`.
    static func event(_ n: Int, site: Int, user: String, time: Int64, release: String?) -> CollectorStore.NewEvent {
        var properties: [String: JSONValue] = [
            "distinct_id": .string(user), "$insert_id": .string("batch-\(n)"), "time": .int(Int(time)),
            "$exception_level": "error",
            "$exception_list": [
                [
                    "type": "Fatal error", "value": .string("site \(site)"),
                    "mechanism": ["type": "swift_fatal", "handled": false],
                    "stacktrace": [
                        "type": "raw",
                        "frames": [
                            [
                                "instruction_addr": .string("0x\(String(0x5555_0000_1000 + site * 16, radix: 16))"),
                                "image_addr": "0x555500000000", "module": "Shop", "in_app": true,
                                "function": .string("Shop.site\(site)()"), "instruction_addr_kind": "pc",
                            ]
                        ],
                    ],
                ]
            ],
        ]
        properties["release"] = release.map { .string($0) }
        let json = JSONValue.object(properties)
        return CollectorStore.NewEvent(
            token: "t", event: "$exception", distinctId: user, time: time, insertId: "batch-\(n)",
            propertiesJSON: json.jsonString, properties: json)
    }

    @Test func aRequestsOccurrencesAreCountedAsIfFiledOneByOneOnEitherSideOfAMove() throws {
        let store = try CollectorStore(directory: nil)
        store.issueStagedLimit = 5
        let day: Int64 = 86_400_000
        let base = 20_000 * day
        // Request 1: site 1 three times (the first without a release, the earliest second), site 2 once.
        _ = try store.insert(
            events: [
                Self.event(1, site: 1, user: "a", time: base + 50, release: nil),
                Self.event(2, site: 1, user: "b", time: base + 10, release: "1.0.0"),
                Self.event(3, site: 2, user: "a", time: base + 20, release: "1.0.0"),
                Self.event(4, site: 1, user: "a", time: base + 50, release: "1.1.0"),
            ], receivedAt: base)
        let queries = IssueQueries(store: store)
        let issues = try queries.list(IssueFilter(), sort: .occurrences, limit: 10)
        #expect(issues.map(\.occurrences) == [3, 1])
        let one = try #require(issues.first)
        #expect(one.users == 2)
        #expect(one.firstRelease == "1.0.0" && one.lastRelease == "1.1.0", "\(one)")
        #expect(one.firstSeen == (base + 10) / 1000 && one.lastSeen == (base + 50) / 1000)
        let ids = try store.events(matching: EventQuery(event: "$exception")).map(\.id)
        #expect(one.latestEventId == ids[3], "the last of the two latest, in arrival order")
        // Staged (4 rows, under the limit of 5): read from the staging table.
        #expect(try queries.occurrenceIds(id: one.id, limit: 10, before: nil) == [ids[3], ids[0], ids[1]])
        #expect(try queries.issueId(ofEvent: ids[2]) == issues[1].id)
        // Request 2 moves the rows (6 staged ≥ 5); request 3 stages one more, a day later.
        _ = try store.insert(
            events: [
                Self.event(5, site: 1, user: "b", time: base + 5, release: "0.9.0"),
                Self.event(6, site: 2, user: "c", time: base + 30, release: nil),
            ], receivedAt: base)
        _ = try store.insert(
            events: [Self.event(7, site: 1, user: "c", time: base + day, release: "1.2.0")], receivedAt: base)
        let all = try store.events(matching: EventQuery(event: "$exception")).map(\.id)
        // The six rows of requests 1–2 were moved into the indexed table; request 3's one is staged.
        #expect(try Self.rowCount(store, "issue_occurrences") == 6)
        #expect(try Self.rowCount(store, "issue_occurrences_new") == 1)
        let after = try #require(try queries.issue(id: one.id))
        #expect(after.occurrences == 5 && after.users == 3)
        #expect(after.firstRelease == "0.9.0" && after.lastRelease == "1.2.0", "\(after)")
        #expect(after.latestEventId == all[6])
        let two = try #require(try queries.issue(id: issues[1].id))
        #expect(two.occurrences == 2 && two.users == 2 && two.lastRelease == nil)
        // Newest first across both tables, and page by page from a cursor in either.
        let newest = [all[6], all[3], all[0], all[1], all[4]]
        #expect(try queries.occurrenceIds(id: one.id, limit: 10, before: nil) == newest)
        #expect(try queries.occurrenceIds(id: one.id, limit: 2, before: nil) == Array(newest[0..<2]))
        #expect(try queries.occurrenceIds(id: one.id, limit: 2, before: newest[1]) == Array(newest[2..<4]))
        #expect(try queries.occurrenceIds(id: one.id, limit: 2, before: newest[3]) == [newest[4]])
        #expect(try queries.occurrenceIds(id: one.id, limit: 2, before: newest[4]) == [])
        #expect(try queries.issueId(ofEvent: all[6]) == one.id && queries.issueId(ofEvent: all[5]) == two.id)
        let perDay = try queries.occurrencesPerDay(id: one.id, days: 3, now: (base + day) / 1000)
        #expect(perDay == [0, 4, 1], "\(perDay)")
        let releases = try queries.occurrencesPerRelease(id: one.id)
        // One occurrence each; the one without a release is not counted.
        let perRelease = releases.sorted { $0.release < $1.release }.map { "\($0.release)=\($0.count)" }
        #expect(perRelease == ["0.9.0=1", "1.0.0=1", "1.1.0=1", "1.2.0=1"], "\(releases)")
    }

    /// A collector of the earlier layout counted staged rows as they arrived (no `flags` column): opening its
    /// database moves them without counting them again.
    @Test func stagedRowsOfTheEarlierLayoutMoveWithoutBeingCountedTwice() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("issue-upgrade-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let store = try CollectorStore(directory: directory)
            _ = try store.insert(
                events: [
                    Self.event(1, site: 1, user: "a", time: 5_000, release: "1.0.0"),
                    Self.event(2, site: 1, user: "b", time: 9_000, release: "1.1.0"),
                ], receivedAt: 0)
            // The rows counted into their issue, then staged again without flags, as the earlier writer left them.
            try store.lock.withLock {
                try store.db.transaction { try IssueWriter.moveStaged(store.db) }
                try store.db.execute(
                    """
                    INSERT INTO issue_occurrences_new(event_id, issue_id, time, distinct_id, release)
                    SELECT event_id, issue_id, time, distinct_id, release FROM issue_occurrences;
                    DELETE FROM issue_occurrences;
                    ALTER TABLE issue_occurrences_new DROP COLUMN flags;
                    """)
            }
        }
        let store = try CollectorStore(directory: directory)
        #expect(try Self.rowCount(store, "issue_occurrences_new") == 0)
        #expect(try Self.rowCount(store, "issue_occurrences") == 2)
        let issues = try IssueQueries(store: store).list(IssueFilter(), sort: .occurrences, limit: 10)
        #expect(issues.map(\.occurrences) == [2] && issues.map(\.users) == [2], "\(issues)")
        #expect(issues.first?.firstRelease == "1.0.0" && issues.first?.lastRelease == "1.1.0")
        // And the next occurrence is counted once.
        _ = try store.insert(events: [Self.event(3, site: 1, user: "a", time: 7_000, release: nil)], receivedAt: 0)
        let after = try IssueQueries(store: store).list(IssueFilter(), sort: .occurrences, limit: 10)
        #expect(after.map(\.occurrences) == [3] && after.map(\.users) == [2], "\(after)")
        #expect(try IssueQueries(store: store).occurrencesPerRelease(id: after.first?.id ?? 0).map(\.count) == [1, 1])
    }

    static func rowCount(_ store: CollectorStore, _ table: String) throws -> Int64 {
        try store.reading { db in
            var count: Int64 = -1
            try db.prepare("SELECT COUNT(*) FROM \(table)").rows { row in
                count = row.int(0)
                return false
            }
            return count
        }
    }
}
