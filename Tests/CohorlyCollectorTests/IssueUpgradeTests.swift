import CohorlyCrashModel
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// A collector's database written with the key before IssueKey.version 2 (fixtures/collector/v1-keys, made by
/// `cohorly serve` of that time with make.sh there) is keyed again when opened: the debug and the release build's
/// issue of one bug become one, the oldest keeping its id and state; the other bug stays its own issue.
@Suite struct IssueUpgradeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/collector/v1-keys/collector.sqlite")

    @Test func aDatabaseOfTheEarlierKeyIsRegroupedWhenOpened() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.fixture, to: directory.appendingPathComponent("collector.sqlite"))
        // As written (make.sh): three issues, the index bug's debug build (resolved) and release build apart.
        let store = try CollectorStore(directory: directory)
        let queries = IssueQueries(store: store)
        let issues = try queries.list(IssueFilter(), sort: .lastSeen, limit: 100)
        #expect(issues.count == 2, "\(issues.map(\.culprit))")
        let index = try #require(issues.first { $0.culprit == "PricingService.lineTotal(at:)" }, "\(issues)")
        #expect(index.id == 1 && index.state == .resolved, "the oldest issue keeps its id and state: \(index)")
        #expect(index.occurrences == 2 && index.users == 2, "\(index)")
        #expect(index.title == "Fatal error" && index.subtitle == "Index out of range", "\(index)")
        let other = try #require(issues.first { $0.culprit == "CatalogStore.discountPercent(for:)" }, "\(issues)")
        #expect(other.id == 3 && other.occurrences == 1, "\(other)")
        #expect(try queries.issue(id: 2) == nil)
        // Keyed once: opened again, nothing moves.
        #expect(try IssueRegrouping.upgradeKeys(store: store) == 0)
    }
}
