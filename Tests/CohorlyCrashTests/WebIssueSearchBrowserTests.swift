import Cohorly
import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The issue list's app selector and search box in a real browser (headless Chromium, Tests/Browser/cdp.py): the
/// selector lists the apps, choosing one and typing a search submits the form to a URL of its own that lists the
/// matching issues with their short ids, and a search that does not parse answers 400 naming its term.
@Suite(.enabled(if: Chromium.executable != nil, Comment(rawValue: Chromium.missing)))
struct WebIssueSearchBrowserTests {
    /// A `$exception` event of `app` failing in `function` with `value`.
    static func exception(_ insertId: String, app: String, function: String, value: String) -> CollectorStore.NewEvent {
        let properties = TwoAppCrashes.properties(
            insertId, app: app, function: function, release: app + "@1.0.0", value: value)
        return CollectorStore.NewEvent(
            token: "t", event: "$exception", distinctId: "u", time: 1_800_000_000_000, insertId: insertId,
            propertiesJSON: properties.jsonString)
    }

    static func text(_ selector: String) -> CohorlyValue {
        let query = CohorlyValue.string(selector).jsonString
        return ["eval": .string("[...document.querySelectorAll(\(query))].map(e => e.textContent.trim())")]
    }

    /// Sets the form's search box and app selector, as a person typing and choosing would.
    static func fill(search: String, app: String) -> CohorlyValue {
        let q = CohorlyValue.string(search).jsonString
        let a = CohorlyValue.string(app).jsonString
        return [
            "eval": .string(
                "document.querySelector('form.actions input[name=q]').value = \(q);"
                    + "document.querySelector('form.actions select[name=app]').value = \(a); true")
        ]
    }

    @Test func theAppSelectorAndSearchBoxFilterTheListAndABadSearchNamesItsTerm() async throws {
        var configuration = CollectorConfiguration()
        configuration.adminToken = "page-secret"
        let collector = try Collector(configuration: configuration)
        try collector.start()
        defer { collector.stop() }
        _ = try collector.store.insert(
            events: [
                Self.exception("s1", app: "Shop", function: "Cart.total()", value: "Index out of range"),
                Self.exception("t1", app: "Till", function: "Cart.total()", value: "Index out of range"),
                Self.exception("t2", app: "Till", function: "Receipt.print()", value: "paper out"),
            ], receivedAt: 1_800_000_000_000)
        let base = collector.webURL.absoluteString
        let session = try await Chromium.run([
            ["go": .string(collector.newLoginURL().absoluteString)], ["wait_url": .string(base + "/")],
            ["eval": "[...document.querySelectorAll('form.actions select[name=app] option')].map(o => o.value)"],
            Self.text("main table.issues .short-id"),
            Self.fill(search: "index", app: "Till"), ["click": "form.actions button[type=submit]"],
            ["eval": "location.search"], Self.text("main table.issues .short-id"),
            Self.text("main table.issues td.title > a"),
            ["eval": "document.querySelector('form.actions select[name=app]').value"],
            Self.fill(search: "is:closed", app: ""), ["click": "form.actions button[type=submit]"],
            Self.text("main p.error"), ["eval": "document.querySelector('form.actions input[name=q]').value"],
        ])
        let r = session.results
        #expect(r[2] == ["", "Shop", "Till"], "every app, then each app that has issues: \(r[2])")
        #expect(r[3].arrayValue?.compactMap(\.stringValue).sorted() == ["SHOP-1", "TILL-1", "TILL-2"], "\(r[3])")
        // Till's issue with "index" in its message: the filtered list has its own URL.
        let search = r[6].stringValue ?? ""
        #expect(search.contains("q=index") && search.contains("app=Till"), "\(search)")
        #expect(r[7] == ["TILL-1"], "\(r[7])")
        #expect(r[8] == ["Fatal error"])
        #expect(r[9] == "Till", "the selector keeps the app chosen")
        // A search that does not parse: 400, the term named, the search kept in the box.
        let refused = r[12].arrayValue?.first?.stringValue ?? ""
        #expect(refused.hasPrefix("invalid search term 'is:closed': unknown state 'closed'"), "\(r[12])")
        #expect(r[13] == "is:closed")
        #expect(session.documents.last?.status == 400, "\(session.documents)")
        #expect(session.requests.allSatisfy { $0.url.hasPrefix(base + "/") }, "\(session.requests)")
    }
}
