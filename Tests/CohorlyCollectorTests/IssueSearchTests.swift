import Cohorly
import CohorlyCollectorAPI
import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The issue search (docs/issues.md, "Search"): the parser's terms and errors, and `GET /api/issues?q=` over
/// loopback for each key, a malformed query answering 400 that names its term.
@Suite struct IssueSearchTests {
    @Test func theParserReadsEveryKeyAndNamesTheTermItRefuses() throws {
        let now: Int64 = 1_800_000_000_000
        let search = try IssueSearch.parse(
            #"index "out of" is:open,regressed level:fatal app:Shop release:Shop@1.2 user:"a b" function:pay firstSeen:-24h lastSeen:>=2026-12-01"#,
            now: now)
        #expect(
            search.terms == [
                .text("index"), .text("out of"), .state(["open", "regressed"]), .level(["fatal"]), .app(["Shop"]),
                .release("Shop@1.2"), .user("a b"), .function("pay"), .seen(.firstSeen, .atOrAfter, now - 86_400_000),
                .seen(.lastSeen, .atOrAfter, 1_796_083_200_000),
            ])
        #expect(try IssueSearch.parse("lastSeen:+7d", now: now).terms == [.seen(.lastSeen, .before, now - 604_800_000)])
        #expect(try IssueSearch.parse("  ", now: now).terms.isEmpty)
        func refusal(_ text: String) -> String {
            do {
                _ = try IssueSearch.parse(text, now: now)
                return "parsed"
            } catch {
                return error.description
            }
        }
        #expect(refusal("crash is:closed").hasPrefix("invalid search term 'is:closed': unknown state 'closed'"))
        #expect(refusal("colour:red").hasPrefix("invalid search term 'colour:red': unknown key 'colour'"))
        #expect(refusal("firstSeen:yesterday").hasPrefix("invalid search term 'firstSeen:yesterday': expected -24h"))
        #expect(refusal("level:") == "invalid search term 'level:': level: needs a value")
        #expect(refusal(#"user:"open"#).hasPrefix(#"invalid search term 'user:"open': the quote is not closed"#))
        #expect(refusal("lastSeen:-99999999999d").hasPrefix("invalid search term 'lastSeen:-99999999999d'"))
        // Releases: the release, a bare version of `name@version`, a prefix up to a separator.
        #expect(IssueSearch.releaseMatches("MyApp@1.2.0", "1.2.0"))
        #expect(IssueSearch.releaseMatches("MyApp@1.2.0", "MyApp"))
        #expect(IssueSearch.releaseMatches("1.2.3", "1.2"))
        #expect(!IssueSearch.releaseMatches("1.20.0", "1.2"))
        #expect(!IssueSearch.releaseMatches("MyAppX@1.0", "MyApp"))
    }

    @Test func everyKeyFindsItsIssuesOverLoopbackAndAMalformedQueryIs400() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let now = Int(Date().timeIntervalSince1970 * 1000)
        let day = 86_400_000
        let batch: CohorlyValue = [
            TwoAppCrashes.event(
                "a", app: "Shop", function: "Cart.total()", release: "Shop@1.2.0", user: "alice", time: now - 2 * day,
                value: "Index out of range"),
            TwoAppCrashes.event(
                "b", app: "Shop", function: "Checkout.pay(_:)", release: "Shop@1.3.0", user: "bob",
                time: now - 3600_000,
                value: "Unexpectedly found nil", level: "error"),
            TwoAppCrashes.event(
                "c", app: "Till", function: "Receipt.print()", release: "Till@2.0.0", user: "alice",
                time: now - 10 * day, value: "100% of 50_percent"),
        ]
        #expect(send(collector, "/track", body: batch.jsonString).status == 200)
        func culprits(_ query: String) -> [String] {
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let reply = send(collector, "GET", "/api/issues?sort=occurrences&q=" + encoded)
            #expect(reply.status == 200, "\(query): \(reply.text)")
            return (reply.body?["issues"]?.arrayValue ?? []).compactMap { $0["culprit"]?.stringValue }.sorted()
        }
        #expect(culprits("") == ["Cart.total()", "Checkout.pay(_:)", "Receipt.print()"])
        // Free text: title, message and culprit, case-insensitive; every word must match.
        #expect(culprits("INDEX") == ["Cart.total()"])
        #expect(culprits("checkout") == ["Checkout.pay(_:)"])
        #expect(culprits("fatal nil") == ["Checkout.pay(_:)"])
        // Words beside other terms (each issue those leave reads its text).
        #expect(culprits("index app:Shop") == ["Cart.total()"])
        #expect(culprits("FATAL level:error") == ["Checkout.pay(_:)"])
        #expect(culprits("receipt app:Shop").isEmpty)
        #expect(culprits(#""found nil""#) == ["Checkout.pay(_:)"])
        // LIKE's wildcards are text.
        #expect(culprits("100%") == ["Receipt.print()"])
        #expect(culprits("50_p") == ["Receipt.print()"])
        #expect(culprits("1_0").isEmpty)
        #expect(culprits("level:error") == ["Checkout.pay(_:)"])
        #expect(culprits("level:error,fatal").count == 3)
        #expect(culprits("app:Till") == ["Receipt.print()"])
        #expect(culprits("release:Shop") == ["Cart.total()", "Checkout.pay(_:)"])
        #expect(culprits("release:2.0.0") == ["Receipt.print()"])
        #expect(culprits("user:alice") == ["Cart.total()", "Receipt.print()"])
        #expect(culprits("user:alice app:Shop") == ["Cart.total()"])
        // Any frame's function, not only the culprit.
        #expect(culprits("function:Router.dispatch").count == 3)
        #expect(culprits("function:pay") == ["Checkout.pay(_:)"])
        #expect(culprits("lastSeen:-24h") == ["Checkout.pay(_:)"])
        #expect(culprits("firstSeen:+7d") == ["Receipt.print()"])
        #expect(culprits("lastSeen:-7d firstSeen:+1d") == ["Cart.total()"])
        // A value that looks like SQL is a value.
        #expect(culprits(#"user:"x' OR '1'='1""#).isEmpty)
        #expect(culprits(#"app:"Shop') OR 1=1 --""#).isEmpty)
        #expect(send(collector, "/api/issues/1/resolve", body: "{}").status == 200)
        #expect(culprits("is:resolved").count == 1)
        #expect(culprits("is:open,regressed").count == 2)

        // Malformed: 400 naming the term.
        for (query, term) in [
            ("crash is:closed", "is:closed"), ("colour:red", "colour:red"), ("lastSeen:soon", "lastSeen:soon"),
            (#"user:"alice"#, #"user:"alice"#),
        ] {
            let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let reply = send(collector, "GET", "/api/issues?q=" + encoded)
            #expect(reply.status == 400, "\(query): \(reply.status) \(reply.text)")
            let message = reply.body?["error"]?.stringValue ?? ""
            #expect(message.hasPrefix("invalid search term '\(term)'"), "\(reply.text)")
        }
    }
}

/// The list reads only the issues that can be among the first: those the stored counters put first, and every
/// issue with occurrences still staged (IssueQueries.list). An old issue that staged occurrences make the latest,
/// or the most frequent, is listed first all the same, and a search over the stored ones is exact.
@Suite struct IssueListCandidateTests {
    @Test func stagedOccurrencesMoveAnOldIssueToTheTopOfAShortList() throws {
        let store = try CollectorStore(directory: nil)
        store.issueStagedLimit = 20
        let base: Int64 = 1_800_000_000_000
        // 20 issues, site n last seen at base + n: moved into the counted table by the 20th row.
        _ = try store.insert(
            events: (1...20).map {
                IssueBatchTests.event($0, site: $0, user: "u", time: base + Int64($0), release: "1.0.0")
            },
            receivedAt: base)
        // Site 1 again, twice, staged: now the latest and the most frequent.
        _ = try store.insert(
            events: [
                IssueBatchTests.event(21, site: 1, user: "v", time: base + 100, release: "1.1.0"),
                IssueBatchTests.event(22, site: 1, user: "w", time: base + 101, release: "1.1.0"),
            ], receivedAt: base)
        let queries = IssueQueries(store: store)
        func culprits(_ filter: IssueFilter = IssueFilter(), sort: IssueSort = .lastSeen, limit: Int = 3) throws
            -> [String]
        {
            try queries.list(filter, sort: sort, limit: limit).map(\.culprit)
        }
        #expect(try culprits() == ["Shop.site1()", "Shop.site20()", "Shop.site19()"])
        #expect(try culprits(sort: .occurrences).first == "Shop.site1()")
        #expect(try culprits(sort: .users).first == "Shop.site1()")
        #expect(try queries.list(IssueFilter(), sort: .lastSeen, limit: 1).first?.occurrences == 3)
        var filter = IssueFilter()
        filter.search = try IssueSearch.parse("site1", now: base)  // site1, site10…site19
        #expect(try culprits(filter) == ["Shop.site1()", "Shop.site19()", "Shop.site18()"])
        filter.search = try IssueSearch.parse("lastSeen:<=\(ISO(base + 50))", now: base)
        #expect(try culprits(filter) == ["Shop.site20()", "Shop.site19()", "Shop.site18()"], "site 1 is later now")
        #expect(try culprits(IssueFilter(release: "1.1")) == ["Shop.site1()"])
    }

    /// `ms` as an ISO 8601 time with milliseconds.
    func ISO(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
