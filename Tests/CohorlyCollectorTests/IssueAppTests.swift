import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

/// Apps over loopback (docs/issues.md, "Apps"): the app joins the issue key, `GET /api/issues?app=` lists one
/// app's issues, the release filter takes a bare version, `App@1.2.0` and prefixes, and each issue has a short id
/// numbered in its app that `GET /api/issues/<short id>` accepts.
@Suite struct IssueAppTests {
    static func issues(_ collector: Collector, _ query: String) throws -> [CohorlyValue] {
        let reply = send(collector, "GET", "/api/issues" + query)
        #expect(reply.status == 200, "\(query): \(reply.text)")
        return try #require(reply.body?["issues"]?.arrayValue, "\(reply.text)")
    }

    @Test func twoAppsCrashingAtOneSiteAreTwoIssuesListedPerAppWithShortIds() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let batch: CohorlyValue = [
            TwoAppCrashes.event("s1", app: "Shop", function: "Cart.total()", release: "Shop@1.2.0"),
            TwoAppCrashes.event("s2", app: "Shop", function: "Cart.total()", release: "Shop@1.3.0"),
            TwoAppCrashes.event("t1", app: "Till", function: "Cart.total()", release: "Till@1.2.0"),
            TwoAppCrashes.event("s3", app: "Shop", function: "Cart.pay()", release: "Shop@1.2.1"),
            TwoAppCrashes.event("n1", app: nil, function: "Cart.total()", release: "1.2.0"),
        ]
        #expect(send(collector, "/track", body: batch.jsonString).status == 200)
        let all = try Self.issues(collector, "?sort=occurrences")
        #expect(all.count == 4, "one site in Shop, Till and no app is three issues, Cart.pay() the fourth: \(all)")
        let shop = try Self.issues(collector, "?app=Shop&sort=occurrences")
        #expect(shop.map { $0["culprit"]?.stringValue } == ["Cart.total()", "Cart.pay()"], "\(shop)")
        #expect(shop.map { $0["app"] } == ["Shop", "Shop"])
        #expect(shop.first?["occurrences"] == 2)
        // Short ids numbered per app, in the order the issues were opened; the row id stays.
        #expect(shop.map { $0["short_id"] } == ["SHOP-1", "SHOP-2"], "\(shop)")
        let till = try Self.issues(collector, "?app=Till")
        #expect(till.map { $0["short_id"] } == ["TILL-1"])
        #expect(try Self.issues(collector, "?app=Nope").isEmpty)
        let none = try #require(all.first { $0["app"] == "" })
        #expect(none["short_id"] == "ISSUE-1")

        // /api/issues/<short id>, any case, is the issue; an unknown one is 404.
        let shopId = try #require(shop.first?["id"]?.intValue)
        let byShortId = send(collector, "GET", "/api/issues/shop-1")
        #expect(byShortId.status == 200, "\(byShortId.text)")
        #expect(byShortId.body?["issue"]?["id"]?.intValue == shopId)
        #expect(send(collector, "GET", "/api/issues/SHOP-9").status == 404)
        let resolved = send(collector, "/api/issues/TILL-1/resolve", body: "{}")
        #expect(resolved.status == 200 && resolved.body?["issue"]?["state"] == "resolved", "\(resolved.text)")

        // Releases: exact, a bare version of `App@version`, an app's prefix, a version prefix.
        func culprits(_ release: String) throws -> [String] {
            try Self.issues(collector, "?sort=occurrences&release=" + release).compactMap {
                ($0["app"]?.stringValue ?? "") + ":" + ($0["culprit"]?.stringValue ?? "")
            }.sorted()
        }
        #expect(try culprits("Shop@1.3.0") == ["Shop:Cart.total()"])
        #expect(try culprits("1.2.0") == [":Cart.total()", "Shop:Cart.total()", "Till:Cart.total()"])
        #expect(try culprits("Shop") == ["Shop:Cart.pay()", "Shop:Cart.total()"])
        #expect(try culprits("1.2") == [":Cart.total()", "Shop:Cart.pay()", "Shop:Cart.total()", "Till:Cart.total()"])
        #expect(try culprits("Sho").isEmpty, "a prefix ends at a separator")
        #expect(try culprits("1.2.0&app=Till") == ["Till:Cart.total()"])
    }

    @Test func aSentryEnvelopesAppIsItsDSNProject() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let eventId = "0123456789abcdef0123456789abcdef"
        let body = SentryEnvelopes.envelope(
            ["event_id": .string(eventId)],
            [("event", SentryEnvelopes.json(SentryEnvelopes.crashEvent(eventId: eventId)))])
        let reply = sendBytes(collector, SentryEnvelopes.path, body: body, headers: SentryEnvelopes.headers())
        #expect(reply.status == 200, "\(reply.text)")
        let issues = try Self.issues(collector, "?app=42")
        #expect(issues.count == 1 && issues.first?["short_id"] == "42-1", "\(issues)")
        // The ingestion records the project under the property the collector core reads, named for no vendor.
        let events = send(collector, "GET", "/api/events", headers: []).body?["events"]?.arrayValue ?? []
        let properties = try #require(events.first?["properties"])
        #expect(properties["$ingestion_project_id"] == "42" && properties["$sentry_project_id"] == nil, "\(properties)")
    }
}
