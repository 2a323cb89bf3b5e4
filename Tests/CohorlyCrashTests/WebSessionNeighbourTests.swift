import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Issue 41, item 2: a browser keeps cookies per host, not per port, so whatever it holds for the collector's host
/// it also sends to a neighbour's server on another port of that host. What the neighbour receives must open no
/// page and change nothing. Headless Chromium signs in with the login URL, then visits the neighbour (another
/// port of 127.0.0.1, as `127.0.0.1` and as `localhost`); each `Cookie` header the neighbour received is replayed
/// to the collector as the neighbour could: with every `Host` it can name and a forged `Origin`.
@Suite(.enabled(if: Chromium.executable != nil, Comment(rawValue: Chromium.missing)))
struct WebSessionNeighbourTests {
    @Test func whatANeighboursServerReceivesFromTheBrowserOpensNoPage() async throws {
        var configuration = CollectorConfiguration()
        configuration.adminToken = "page-secret"
        configuration.webActions = true
        let collector = try Collector(configuration: configuration)
        try collector.start()
        defer { collector.stop() }
        let login = collector.newLoginURL()
        // Where the login sends the browser (the pages' origin).
        let pages = "http://\(login.host ?? "?"):\(login.port ?? 0)"
        let heading = CohorlyValue.object(["eval": "document.querySelector('h1').textContent"])
        let session = try await Chromium.run(
            [
                ["go": .string(login.absoluteString)], ["wait_url": .string(pages + "/")], heading,
                ["go": "FOREIGN/visited"], ["go": "NEIGHBOUR/visited"],
                ["go": .string(pages + "/")], heading,
            ], foreignPage: "<!doctype html><title>neighbour</title><p>a neighbour's page</p>")
        // Signed in before and after the visit.
        #expect(session.results[2] == "Issues" && session.results[6] == "Issues", "\(session.results)")
        #expect(session.foreignRequests.filter { $0.path == "/visited" }.count == 2, "\(session.foreignRequests)")
        let names = ["127.0.0.1:\(collector.port)", "localhost:\(collector.port)", "127.0.0.1"]
        for received in session.foreignRequests {
            for host in names {
                let page = sendTo(
                    collector, "GET", "/", body: [], headers: [("Cookie", received.cookie), ("Host", host)])
                #expect(page.status == 401, "the neighbour read the issues with \(received.cookie) at \(host)")
                let form = sendTo(
                    collector, "POST", "/logout", body: Array("x=1".utf8),
                    headers: [
                        ("Cookie", received.cookie), ("Host", host), ("Origin", "http://\(host)"),
                        ("Sec-Fetch-Site", "same-origin"), ("Content-Type", Router.formContentType),
                    ])
                #expect(form.status == 403, "the neighbour posted a form with \(received.cookie) at \(host)")
            }
        }
    }
}
