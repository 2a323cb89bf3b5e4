import Cohorly
import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Issue 43, items 3–5, in headless Chromium over real CrashDemo crashes (WebPageBrowserTests' collector): the
/// issue page's tag breakdowns and short culprit, an occurrence reached by its insert id with Previous / Next and
/// the stored JSON's download link, and a breadcrumb's data.
@Suite(.enabled(if: Chromium.executable != nil, Comment(rawValue: Chromium.missing)))
struct IssueTrackerBrowserTests {
    @Test func theIssuePageBreaksDownTagsAndOccurrencesLinkToTheirNeighboursAndTheirJSON() async throws {
        // The async crash three times (two a second and two seconds earlier), and the fatal error.
        let (collector, asyncId, issue, _) = try await WebPageBrowserTests.collector(earlierAsync: 2)
        defer { collector.stop() }
        let events = try await WebPageBrowserTests.crashes.value
        // One more occurrence of the async crash, from another host, with a breadcrumb that carries data.
        var properties = try #require(CohorlyValue(json: events[0].propertiesJSON)?.objectValue)
        properties["$hostname"] = "web-2"
        properties["$exception_breadcrumbs"] = [
            [
                "timestamp": "2026-12-01T02:22:45.123Z", "category": "track", "message": "Purchase",
                "data": ["sku": "sku-404"],
            ]
        ]
        var extra = events[0].newEvent
        extra.insertId = events[0].insertId + "-web-2"
        extra.time -= 10_000
        extra.propertiesJSON = CohorlyValue.object(properties).jsonString
        _ = try collector.store.insert(events: [extra], receivedAt: 1_796_000_000_000)
        let ids = try IssueQueries(store: collector.store).occurrenceIds(id: issue, limit: 10, before: nil)
        #expect(ids.count == 4)
        let base = collector.webURL.absoluteString
        let culprit =
            "[...document.querySelectorAll('main dl.facts dt')].filter(e => e.textContent == 'Culprit')"
            + ".map(e => e.nextElementSibling.textContent)"
        func cells(_ tag: String) -> CohorlyValue {
            [
                "eval": .string(
                    "[...document.querySelectorAll('main section.tag[data-tag=\(tag)] tr')]"
                        + ".map(r => [...r.cells].slice(0, 3).map(c => c.textContent.trim()).join(' | '))")
            ]
        }
        let session = try await Chromium.run([
            ["go": .string(collector.newLoginURL().absoluteString)], ["wait_url": .string(base + "/")],
            ["go": .string("\(base)/issues/\(issue)")],
            WebPageBrowserTests.text("main section.tag h3"), cells("host"), cells("user"), cells("release"),
            ["eval": .string(culprit)],
            // The newest occurrence, by its insert id.
            ["go": .string("\(base)/events/\(events[0].insertId)")],
            WebPageBrowserTests.text("main nav.occurrence-nav a"), ["eval": "location.pathname"],
            ["eval": "document.querySelector('main a.raw').getAttribute('href')"],
            ["eval": "document.querySelector('main a.raw').hasAttribute('download')"],
            ["click": "main nav.occurrence-nav a.previous"], ["eval": "location.pathname"],
            ["click": "main nav.occurrence-nav a.previous"], ["click": "main nav.occurrence-nav a.previous"],
            ["eval": "location.pathname"], WebPageBrowserTests.text("main nav.occurrence-nav a"),
            WebPageBrowserTests.text("main table.breadcrumbs td.data"),
            ["click": "main nav.occurrence-nav a.next"], ["eval": "location.pathname"],
        ])
        let r = session.results
        #expect(r[3] == ["Release", "OS", "Host", "User", "Thread"], "\(r[3])")
        // This machine's host name three times, web-2 once.
        let hosts = r[4].arrayValue?.compactMap(\.stringValue) ?? []
        #expect(hosts.count == 2 && hosts[0].hasSuffix(" | 3 | 75 %") && hosts[1] == "web-2 | 1 | 25 %", "\(hosts)")
        #expect(r[5] == ["demo-user | 4 | 100 %"], "\(r[5])")
        #expect(r[6].arrayValue?.count == 1, "\(r[6])")
        // The culprit as the stack prints it, without the module or the signature.
        let shown = try #require(r[7].arrayValue?.first?.stringValue)
        #expect(shown.hasSuffix(")") && !shown.contains(" -> ") && !shown.contains("CrashDemo."), "\(shown)")
        // Reached by insert id: the newest occurrence's page (no Next; its download by row id).
        #expect(r[9] == ["← Previous", "Stored JSON"], "\(r[9])")
        #expect(r[10] == .string("/events/\(events[0].insertId)"), "\(r[10])")
        #expect(r[11] == .string("/events/\(asyncId).json") && r[12] == true, "\(r[11]) \(r[12])")
        // Previous goes back in crash time, through every occurrence of the issue, to the oldest.
        #expect(r[14] == .string("/events/\(ids[1])"), "\(r[14])")
        #expect(r[17] == .string("/events/\(ids[3])"), "\(r[17])")
        #expect(r[18] == ["Next →", "Stored JSON"], "\(r[18])")
        #expect(r[19] == [#"{"sku":"sku-404"}"#], "\(r[19])")
        #expect(r[21] == .string("/events/\(ids[2])"), "\(r[21])")
        #expect(session.documents.allSatisfy { $0.status == 200 }, "\(session.documents)")
        #expect(session.requests.allSatisfy { $0.url.hasPrefix(base + "/") }, "\(session.requests)")
    }
}
