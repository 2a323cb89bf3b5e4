import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// A request's events are grouped on another thread while its own writes their properties' text
/// (IssueGrouping+Alongside.swift): each event still gets its own occurrence, in order, whichever thread grouped
/// them, and a request whose hand-off never runs groups them itself.
@Suite struct IssueGroupingAlongsideTests {
    /// 40 events: every fourth a screen view, the others `$exception`s of crash sites 0–4 in turn, each with its
    /// properties' text still to be written.
    static func mixedBatch() -> [CollectorStore.NewEvent] {
        (0..<40).map { n in
            if n % 4 == 3 {
                let properties: JSONValue = ["distinct_id": "u", "$insert_id": .string("view-\(n)")]
                return CollectorStore.NewEvent(
                    token: "t", event: "Screen Viewed", distinctId: "u", time: Int64(n), insertId: "view-\(n)",
                    propertiesJSON: "", properties: properties)
            }
            var event = IssueBatchTests.event(n, site: n % 5, user: "u\(n % 3)", time: Int64(1_000 + n), release: nil)
            event.propertiesJSON = ""
            return event
        }
    }

    /// The crash site each event's occurrence names (nil: none), from its key's subtitle (`site N`).
    static func sites(_ occurrences: [IssueOccurrence?]) -> [String?] { occurrences.map { $0?.key.subtitle } }

    static func expectedSites() -> [String?] { (0..<40).map { $0 % 4 == 3 ? nil : "site \($0 % 5)" } }

    @Test func eventsGroupedOnTheOtherThreadKeepTheirOrder() {
        let grouping = IssueGrouping()
        let events = Self.mixedBatch()
        var ran = 0
        var handedOff = false
        // The hand-off runs at once, before `work`: the other side does all of the grouping, from the last event.
        let (output, occurrences) = grouping.occurrences(
            for: events,
            alongside: { () -> Int in
                ran += 1
                return 7
            },
            dispatch: {
                handedOff = true
                $0()
            })
        #expect(output == 7 && ran == 1 && handedOff)
        #expect(Self.sites(occurrences) == Self.expectedSites())
        #expect(occurrences.map { $0?.distinctId } == events.map { $0.event == "$exception" ? $0.distinctId : nil })
        #expect(Self.sites(grouping.occurrences(for: events)) == Self.expectedSites())
    }

    @Test func aHandOffThatNeverRunsIsDoneByTheRequestsThread() {
        let (_, occurrences) = IssueGrouping().occurrences(for: Self.mixedBatch(), alongside: { 0 }, dispatch: { _ in })
        #expect(Self.sites(occurrences) == Self.expectedSites())
    }

    @Test func withoutGroupingNoEventHasAnOccurrence() {
        let grouping = IssueGrouping()
        grouping.configure(enabled: false, symbolicator: nil)
        var handedOff = false
        let (_, occurrences) = grouping.occurrences(
            for: Self.mixedBatch(), alongside: { 0 }, dispatch: { _ in handedOff = true })
        #expect(occurrences.count == 40 && occurrences.allSatisfy { $0 == nil } && !handedOff)
    }

    @Test func fewExceptionsAreGroupedOnTheRequestsThread() {
        var handedOff = false
        let events = Array(Self.mixedBatch().prefix(9))  // 7 `$exception`s
        let (_, occurrences) = IssueGrouping().occurrences(
            for: events, alongside: { 0 }, dispatch: { _ in handedOff = true })
        #expect(!handedOff && Self.sites(occurrences) == Array(Self.expectedSites().prefix(9)))
    }

    /// Through the store, on the real thread pool: every event stored with its properties, each `$exception` under the
    /// issue of its own crash site.
    @Test func aStoredBatchFilesEachExceptionUnderItsSitesIssue() throws {
        let store = try CollectorStore(directory: nil)
        let events = Self.mixedBatch()
        #expect(try store.insert(writing: events, receivedAt: 0) == 40)
        let stored = try store.reading { db in
            var rows: [String: (properties: String, site: String?)] = [:]
            try db.prepare(
                """
                SELECT e.insert_id, e.properties, i.subtitle, e.crash FROM events e
                LEFT JOIN issue_occurrences_new o ON o.event_id = e.id LEFT JOIN issues i ON i.id = o.issue_id
                """
            ).rows { row in
                // A crash's properties are read back from its model and what it does not say (StoredCrash.swift).
                rows[row.text(0) ?? ""] = (CollectorStore.propertiesJSON(row.text(1), crash: row.text(3)), row.text(2))
                return true
            }
            return rows
        }
        for (index, event) in events.enumerated() {
            let row = stored[event.insertId ?? ""]
            #expect(row?.properties == event.properties?.jsonString, "event \(index)")
            #expect(row?.site == Self.expectedSites()[index], "event \(index)")
        }
        let issues = try IssueQueries(store: store).list(IssueFilter(), sort: .occurrences, limit: 10)
        #expect(issues.map(\.occurrences) == [6, 6, 6, 6, 6], "\(issues)")
    }
}
