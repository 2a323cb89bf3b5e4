import CohorlyCollectorAPI
import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// A collector's database keyed before apps joined the key (IssueKey.version 2, fixtures/collector/v2-keys, made
/// by `cohorly serve` of that time with make.sh there) is moved to the table keyed by app and keyed again when
/// opened: the issue one crash site had in two apps becomes two, the app with most of its occurrences keeping its
/// id and state; every issue gets a short id in its app, and the function index is filled from the stored events.
@Suite struct IssueAppUpgradeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/collector/v2-keys/collector.sqlite")

    @Test func aDatabaseFromBeforeAppsIsSplitByAppWhenOpened() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: Self.fixture, to: directory.appendingPathComponent("collector.sqlite"))
        // As written (make.sh): issue 1 (resolved) holds Shop's two and Till's one crash in
        // PricingService.lineTotal(at:), issue 2 Till's crash in Receipt.print().
        let store = try CollectorStore(directory: directory)
        let queries = IssueQueries(store: store)
        let issues = try queries.list(IssueFilter(), sort: .lastSeen, limit: 100)
        let summary = issues.map { "\($0.id) \($0.shortId) \($0.app) \($0.culprit) \($0.state) \($0.occurrences)" }
        #expect(
            summary.sorted() == [
                "1 SHOP-1 Shop PricingService.lineTotal(at:) resolved 2",
                "2 TILL-1 Till Receipt.print() open 1",
                "3 TILL-2 Till PricingService.lineTotal(at:) open 1",
            ], "\(summary)")
        // The function index holds the stored occurrences' frames.
        var filter = IssueFilter()
        filter.search = try IssueSearch.parse("function:lineTotal", now: 0)
        #expect(try queries.list(filter, sort: .lastSeen, limit: 100).map(\.id).sorted() == [1, 3])
        filter.search = try IssueSearch.parse("function:Shop.main", now: 0)
        #expect(try queries.list(filter, sort: .lastSeen, limit: 100).count == 3)
        #expect(try queries.issueId(shortId: "till-2") == 3)
        // Keyed once: opened again, nothing moves; a new issue of Shop is SHOP-2 (numbers never given twice).
        #expect(try IssueRegrouping.upgradeKeys(store: store) == 0)
        let event = TwoAppCrashes.event("new", app: "Shop", function: "Cart.pay()", release: "Shop@2.0.0")
        _ = try store.insert(
            events: [
                CollectorStore.NewEvent(
                    token: "t", event: "$exception", distinctId: "u", time: 1_800_000_000_000, insertId: "new",
                    propertiesJSON: event["properties"]?.jsonString ?? "{}")
            ], receivedAt: 1_800_000_000_000)
        #expect(try queries.list(IssueFilter(app: "Shop"), sort: .lastSeen, limit: 1).first?.shortId == "SHOP-2")
    }

    /// The project a wire was addressed to names the app before `$app_name`, under the neutral property the
    /// ingestion sets, and events an earlier collector stored with the property named for Sentry keep theirs.
    @Test func theWiresProjectNamesTheAppUnderTheNeutralAndTheFormerProperty() throws {
        let store = try CollectorStore(directory: nil)
        for (key, app) in [(CollectorStore.NewEvent.projectProperty, "42"), ("$sentry_project_id", "7")] {
            var properties = try #require(
                TwoAppCrashes.properties("e-" + app, app: "Shop", function: "Cart.pay()", release: "Shop@2.0.0")
                    .objectValue)
            properties[key] = .string(app)
            _ = try store.insert(
                events: [
                    CollectorStore.NewEvent(
                        token: "t", event: "$exception", distinctId: "u", time: 1_800_000_000_000, insertId: "e-" + app,
                        propertiesJSON: JSONValue.object(properties).jsonString)
                ], receivedAt: 1_800_000_000_000)
        }
        let queries = IssueQueries(store: store)
        let issues = try queries.list(IssueFilter(), sort: .lastSeen, limit: 100).map { "\($0.app) \($0.shortId)" }
        #expect(issues.sorted() == ["42 42-1", "7 7-1"], "\(issues)")
        #expect(try queries.list(IssueFilter(app: "Shop"), sort: .lastSeen, limit: 100).isEmpty)
    }
}
