import Cohorly
import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlyCrash

/// The collector's web pages in a real browser (headless Chromium through the DevTools protocol), over a
/// collector holding real CrashDemo crashes: an async crash with a hostile breadcrumb, and a fatal error whose
/// message holds control characters. One browser launch per test.
@Suite(.enabled(if: Chromium.executable != nil, Comment(rawValue: Chromium.missing)))
struct WebPageBrowserTests {
    /// The breadcrumb the async crash carries: markup that must show as text.
    static let hostileCrumb = "<img src=x onerror=alert(1)>opened <b>cart</b>"

    /// The two crashes' `$exception` events, made once for the suite.
    static let crashes = Task { try await WebCrashes.make(breadcrumb: hostileCrumb) }

    /// A collector with the secret `page-secret` holding the crashes (grouped into issues as they are stored);
    /// the async crash's row id and issue id, the fatal one's row id.
    /// `earlierAsync`: that many more occurrences of the async crash, each a second before the one after it.
    static func collector(webActions: Bool = false, earlierAsync: Int = 0) async throws -> (
        Collector, async: Int64, asyncIssue: Int64, fatal: Int64
    ) {
        let events = try await crashes.value
        var configuration = CollectorConfiguration()
        configuration.adminToken = "page-secret"
        configuration.webActions = webActions
        let collector = try Collector(configuration: configuration)
        try collector.start()
        var sent = events.map(\.newEvent)
        for n in 0..<earlierAsync {
            var earlier = events[0].newEvent
            earlier.insertId = "\(events[0].insertId)-\(n)"
            earlier.time -= Int64(n + 1) * 1000
            sent.append(earlier)
        }
        _ = try collector.store.insert(events: sent, receivedAt: 1_796_000_000_000)
        let stored = try collector.store.events(matching: EventQuery(event: "$exception"))
        let async = try #require(stored.first { $0.insertId == events[0].insertId }?.id)
        let fatal = try #require(stored.first { $0.insertId == events[1].insertId }?.id)
        let issue = try #require(try IssueQueries(store: collector.store).issueId(ofEvent: async))
        return (collector, async, issue, fatal)
    }

    static func text(_ selector: String) -> CohorlyValue {
        let query = CohorlyValue.string(selector).jsonString
        return ["eval": .string("[...document.querySelectorAll(\(query))].map(e => e.textContent.trim())")]
    }

    static let runtimeFailure = "Swift runtime failure: Unexpectedly found nil while unwrapping an Optional value"

    @Test func signedInThePagesShowTheIssuesStacksAndBreadcrumbsAndLoadNothingFromElsewhere() async throws {
        let (collector, _, issue, fatalId) = try await Self.collector()
        defer { collector.stop() }
        let base = collector.webURL.absoluteString
        let session = try await Chromium.run([
            ["go": .string(collector.newLoginURL().absoluteString)], ["wait_url": .string(base + "/")],
            Self.text("main table.issues td.title > a"), Self.text("main table.issues td.num"),
            ["eval": "document.querySelectorAll('main table.issues svg.chart rect').length"], ["cookies": true],
            ["go": .string("\(base)/issues/\(issue)")],
            Self.text("main ol.frames > li"), Self.text("main ol.frames > li .kind"),
            Self.text("main details > summary"), Self.text("main td.title"),
            ["eval": "document.querySelectorAll('main img, main b, main script').length"],
            ["go": .string("\(base)/events/\(fatalId)")], Self.text("h1, p.sub"),
            ["width": 375], ["go": .string("\(base)/issues/\(issue)")],
            ["eval": "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"],
            ["go": .string("\(base)/events")], Self.text("main td.title > a"),
        ])
        let r = session.results
        // The issues: one per crash, their counts, a 14-day chart each.
        let titles = r[2].arrayValue?.compactMap(\.stringValue) ?? []
        // One title format for debug and release: a runtime failure is a `Fatal error` too (issue 38, item 3).
        #expect(titles.sorted() == ["Fatal error", "Fatal error"], "\(titles)")
        #expect(r[3].arrayValue == ["1", "1", "1", "1"], "\(r[3])")  // events and users of each
        #expect(r[4] == .int(2 * 14), "\(r[4])")
        // The session cookie: HttpOnly, SameSite=Lax, Path=/, host-only on the pages' own name (no other cookie).
        #expect(r[5].arrayValue?.count == 1, "\(r[5])")
        let cookie = try #require(r[5].arrayValue?.first)
        #expect(cookie["name"] == .string("cohorly_session_\(collector.port)"))
        #expect(cookie["httpOnly"] == true && cookie["sameSite"] == "Lax" && cookie["path"] == "/")
        #expect(cookie["domain"] == .string(collector.webURL.host ?? "?"), "\(cookie)")
        // The async crash's issue: the crashing actor method, then who awaited it, in order, tagged async.
        let frames = r[7].arrayValue?.compactMap(\.stringValue) ?? []
        let discount = try #require(frames.firstIndex { $0.contains("discountPercent") }, "\(frames)")
        let awaiting = frames[discount...].filter { $0.hasPrefix("async") }
        #expect(AsyncCrashEventTests.inOrder(AsyncCrashEventTests.callers, awaiting), "\(awaiting)")
        #expect(frames.contains { $0.hasPrefix("inlined") }, "no inlined frame: \(frames)")
        #expect(r[8].arrayValue?.contains("async") == true)
        // The executor's frames and every other thread folded.
        let summaries = r[9].arrayValue?.compactMap(\.stringValue) ?? []
        #expect(summaries.contains { $0.hasSuffix("executor frames") }, "\(summaries)")
        #expect(summaries.contains { $0.hasPrefix("Thread ") }, "\(summaries)")
        // The breadcrumb is text: no element came out of it.
        #expect(r[10].arrayValue?.contains(.string(Self.hostileCrumb)) == true, "\(r[10])")
        #expect(r[11] == 0)
        // The fatal error's message, control characters replaced.
        let heading = r[13].arrayValue?.compactMap(\.stringValue) ?? []
        #expect(heading.first == "Fatal error")
        #expect(heading.last?.contains("demo fatal ✓ ünïcödé \u{FFFD}bell\u{FFFD}tab") == true, "\(heading)")
        // A phone's width: nothing wider than the screen.
        let widths = r[16].arrayValue?.compactMap(\.intValue) ?? []
        #expect(widths.count == 2 && widths[0] <= widths[1] && widths[1] == 375, "\(widths)")
        // The occurrences.
        #expect(r[18].arrayValue?.compactMap(\.stringValue).sorted() == ["Fatal error", Self.runtimeFailure])
        // Every request went to the collector itself (documents and the stylesheet), every page answered 200.
        #expect(session.requests.count >= 10)
        let elsewhere = session.requests.filter { !$0.url.hasPrefix(base + "/") }
        #expect(elsewhere.isEmpty, "\(elsewhere)")
        #expect(session.requests.contains { $0.url == base + WebStyle.path })
        #expect(session.documents.allSatisfy { $0.status == 200 }, "\(session.documents)")
    }

    @Test func theCulpritShowsAndTheIssuePagePagesThroughOlderOccurrences() async throws {
        let (collector, _, issue, _) = try await Self.collector(earlierAsync: 24)
        defer { collector.stop() }
        let base = collector.webURL.absoluteString
        let culprits = try IssueQueries(store: collector.store).list(IssueFilter(), sort: .lastSeen, limit: 10)
            .map(\.culprit).filter { !$0.isEmpty }
        let facts =
            "[...document.querySelectorAll('main dl.facts dt')].filter(e => e.textContent == 'Culprit')"
            + ".map(e => e.nextElementSibling.textContent)"
        let session = try await Chromium.run([
            ["go": .string(collector.newLoginURL().absoluteString)], ["wait_url": .string(base + "/")],
            Self.text("main table.issues td.title"),
            ["go": .string("\(base)/issues/\(issue)")], ["eval": .string(facts)],
            ["eval": "document.querySelectorAll('main ul.occurrences > li').length"], Self.text("main nav.pager a"),
            ["click": "main nav.pager a.older"],
            ["eval": "document.querySelectorAll('main ul.occurrences > li').length"],
            Self.text("main nav.pager a"), ["eval": "location.search"],
            ["click": "main nav.pager a.newest"],
            ["eval": "document.querySelectorAll('main ul.occurrences > li').length"],
        ])
        let r = session.results
        // The list shows each issue's culprit (its top in-app frame; the line under the title when it is the
        // subtitle already, as for a runtime failure), the issue page too.
        #expect(culprits.count == 2, "\(culprits)")
        let rows = r[2].arrayValue?.compactMap(\.stringValue) ?? []
        for culprit in culprits { #expect(rows.contains { $0.contains(culprit) }, "\(culprit) in \(rows)") }
        #expect(rows.contains { $0.contains("crashFatalError()") }, "\(rows)")
        let culprit = try #require(r[4].arrayValue?.first?.stringValue)
        #expect(culprits.contains(culprit), "\(culprit)")
        // 25 occurrences: 20 on the first page and a link to the older ones, 5 there and one back.
        #expect(r[5] == 20 && r[6] == ["Older"], "\(r[5]) \(r[6])")
        #expect(r[8] == 5 && r[9] == ["Newest"], "\(r[8]) \(r[9])")
        #expect(r[10].stringValue?.hasPrefix("?before=") == true, "\(r[10])")
        #expect(r[12] == 20)
        #expect(session.documents.allSatisfy { $0.status == 200 }, "\(session.documents)")
        #expect(session.requests.allSatisfy { $0.url.hasPrefix(base + "/") }, "\(session.requests)")
    }

    @Test func withoutTheSessionPagesAreRefusedAndTheLoginURLWorksOnce() async throws {
        let (collector, asyncId, issue, _) = try await Self.collector()
        defer { collector.stop() }
        let base = collector.webURL.absoluteString
        let login = collector.newLoginURL().absoluteString
        let session = try await Chromium.run([
            ["go": .string(base + "/")], ["eval": "document.querySelector('main').textContent"],
            ["go": .string("\(base)/events/\(asyncId)")], ["eval": "document.querySelectorAll('ol.frames').length"],
            ["go": .string("\(base)/issues/\(issue)")],
            ["go": .string(login)], ["wait_url": .string(base + "/")],
            ["go": .string(login)], ["eval": "document.querySelector('h1').textContent"],
        ])
        #expect(session.documents.map(\.status) == [401, 401, 401, 200, 403], "\(session.documents)")  // the login is a 303
        #expect(session.results[1].stringValue?.contains("needs a session") == true, "\(session.results[1])")
        #expect(session.results[3] == 0)
        #expect(session.results[8] == "Login URL not valid")
    }

    /// Scripted screenshots, as docs/web.md tells them: `chromium --headless --screenshot` of a login URL ends with
    /// a picture, and `--dump-dom` of another shows the issues: the login answers 303 to `/`, not a page that
    /// refreshes itself, on which a tool waiting for the load hung with the one-time URL spent (issue 41, item 7).
    @Test func aHeadlessScreenshotOfTheLoginURLEndsOnTheIssues() async throws {
        guard let executable = Chromium.executable else { throw Chromium.Failure(description: Chromium.missing) }
        let (collector, _, _, _) = try await Self.collector()
        defer { collector.stop() }
        let directory = try makeTemporaryDirectory("screenshot")
        defer { try? FileManager.default.removeItem(at: directory) }
        func chromium(_ arguments: [String], profile: String) async throws -> (status: Int32, output: String) {
            // Bounded by coreutils' timeout: a browser still waiting after 60 s (exit 124) is the hang this test is
            // about.
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
            process.arguments =
                ["-s", "KILL", "60", executable] + (getuid() == 0 ? ["--no-sandbox"] : []) + [
                    "--headless", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage",
                    "--user-data-dir=" + directory.appendingPathComponent(profile).path, "--window-size=1000,800",
                ] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            let data = try await runReadingToEnd(process, reading: output)
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let picture = directory.appendingPathComponent("issues.png")
        let shot = try await chromium(
            ["--screenshot=" + picture.path, collector.newLoginURL().absoluteString], profile: "one")
        #expect(shot.status == 0, "chromium --screenshot did not end by itself")
        let png = (try? Data(contentsOf: picture)) ?? Data()
        #expect(png.starts(with: [0x89, 0x50, 0x4e, 0x47]), "no PNG written")

        let dom = try await chromium(["--dump-dom", collector.newLoginURL().absoluteString], profile: "two")
        #expect(dom.status == 0)
        #expect(dom.output.contains("<h1><bdi>Issues</bdi></h1>"), "\(dom.output.prefix(600))")
        #expect(dom.output.contains("Fatal error"), "the issues are listed")
    }

    @Test func aFormPostedFromAnotherOriginIsRefusedAndThePagesOwnIsNot() async throws {
        let (collector, _, issue, _) = try await Self.collector(webActions: true)
        defer { collector.stop() }
        let base = collector.webURL.absoluteString
        // Another port of the same host: same-site (so the SameSite=Lax cookie goes along), not same-origin.
        let foreign = """
            <!doctype html><form method="post" action="\(base)/issues/\(issue)/resolve">
            <input name="in_release" value="9.9.9"><button id="go" type="submit">go</button></form>
            """
        let session = try await Chromium.run(
            [
                ["go": .string(collector.newLoginURL().absoluteString)], ["wait_url": .string(base + "/")],
                ["go": "FOREIGN/"], ["click": "#go"], ["eval": "document.body.textContent"],
                ["go": .string("\(base)/issues/\(issue)")], Self.text("main .badge[class*=state-]"),
                ["click": "form[action$='/resolve'] button"], Self.text("main .badge[class*=state-]"),
                ["click": "form.logout button"], ["eval": "document.querySelector('h1').textContent"],
            ], foreignPage: foreign)
        let statuses = session.documents.map { ($0.url.hasPrefix(base) ? "" : "foreign ") + String($0.status) }
        // / (the login's 303 led there), the foreign page, its refused POST, the issue, the issue after its own
        // Resolve (303), log out (303 → / refused).
        #expect(statuses == ["200", "foreign 200", "403", "200", "200", "401"], "\(session.documents)")
        #expect(session.results[4].stringValue?.contains("cross-origin form refused") == true, "\(session.results[4])")
        #expect(session.results[6] == ["open"])
        #expect(session.results[8] == ["resolved"])
        #expect(session.results[10] == "Sign in")
        let resolved = try #require(try IssueQueries(store: collector.store).issue(id: issue))
        #expect(resolved.state == .resolved && resolved.resolvedInRelease == nil)
        #expect(
            session.requests.filter { $0.method == "POST" }.map(\.url) == [
                "\(base)/issues/\(issue)/resolve", "\(base)/issues/\(issue)/resolve", "\(base)/logout",
            ])
    }
}

/// Real CrashDemo crashes as the `$exception` events their next launch would send.
struct WebCrashes: Sendable {
    var insertId: String
    var time: Int64
    var propertiesJSON: String

    var newEvent: CollectorStore.NewEvent {
        CollectorStore.NewEvent(
            token: "t", event: "$exception", distinctId: "demo-user", time: time, insertId: insertId,
            propertiesJSON: propertiesJSON)
    }

    /// An async crash (`crash async-actor` in the release build, whose frames have inlined calls; with the
    /// client, so it keeps `breadcrumb`) and `crash fatal-error`.
    static func make(breadcrumb: String) async throws -> [WebCrashes] {
        let root = try makeTemporaryDirectory("web-crashes")
        defer { removeLaunchDirectory(root) }
        async let asyncRun = runCrashDemo(
            [
                "crash", "async-actor", "--breadcrumb", breadcrumb, "--storage",
                root.appendingPathComponent("storage").path,
            ], build: .release, reportDirectory: root.appendingPathComponent("async"), withClient: true,
            environment: ["COHORLY_HOST": "http://127.0.0.1:9"])
        async let fatalRun = runCrashDemo(
            ["crash", "fatal-error"], reportDirectory: root.appendingPathComponent("fatal"))
        var crashes: [WebCrashes] = []
        for run in [try await asyncRun, try await fatalRun] {
            guard let report = try run.reports().first else {
                throw Chromium.Failure(description: "CrashDemo left no report: \(run.stderr)")
            }
            let event = ExceptionBuilder.make(from: report, symbols: ExceptionBuilder.symbolicate(report)).properties
            crashes.append(
                WebCrashes(
                    insertId: report.insertId, time: Int64(report.timestampMs),
                    propertiesJSON: CohorlyValue.object(event).jsonString))
        }
        return crashes
    }
}
