import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The issue list's answer is written as text without a tree: the same bytes the tree of each issue gives.
@Suite struct IssueListJSONTests {
    @Test func theListTextIsTheTreesText() {
        var plain = IssueSummary(
            id: 7, fingerprint: "f", title: "Fatal error", subtitle: "Index out of range", culprit: "Shop.pay()",
            level: "fatal", mechanism: "swift_fatal", state: .open, resolvedInRelease: nil, mutedUntil: nil,
            mutedForOccurrences: nil, firstSeen: 1_700_000_000, lastSeen: 1_700_000_100, occurrences: 3, users: 2,
            firstRelease: nil, lastRelease: "1.0.0", latestEventId: 42)
        var odd = plain
        odd.id = 8
        odd.title = "quote \" backslash \\ newline \n tab \t \u{01} ünïcode 💥"
        odd.subtitle = ""
        odd.state = .muted
        odd.resolvedInRelease = "1.2.0"
        odd.mutedUntil = 1_800_000_000
        odd.mutedForOccurrences = 5
        odd.firstSeen = -5
        odd.firstRelease = "0.9.0"
        odd.lastRelease = nil
        plain.culprit = ""
        for issues in [[], [plain], [plain, odd]] {
            let tree = JSONValue.object(["issues": .array(issues.map(\.json)), "count": .int(issues.count)])
            #expect(IssueListJSON.text(issues) == tree.jsonString)
        }
    }
}
