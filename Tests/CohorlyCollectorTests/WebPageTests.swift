import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The web pages' rules without a browser (WebPageBrowserTests has the browser): event text is escaped, pages
/// need the session a one-time login token gives, forms must come from this origin, and the collector's own
/// rules (Host, rate limit) hold for the pages too.
@Suite struct WebPageTests {
    static let port: UInt16 = 4000
    /// The collector's address (the API's; the pages are at `router.web.origin`).
    static let address = "http://127.0.0.1:\(port)"

    static func router(_ configure: (inout CollectorConfiguration) -> Void = { _ in }) throws -> Router {
        var configuration = CollectorConfiguration()
        configuration.adminToken = "page-secret"
        configure(&configuration)
        let store = try CollectorStore(directory: nil)
        let router = Router(
            ingestion: Ingestion(store: store, configuration: configuration), store: store,
            debugFiles: try DebugFileStore(directory: nil), faults: FaultInjector(), configuration: configuration,
            rateLimiter: configuration.rateLimit.map(RateLimiter.init), wires: CollectorWires.all)
        router.web.listening(on: port)
        return router
    }

    static func get(_ router: Router, _ path: String, _ headers: [String: String] = [:]) -> HTTPResponse? {
        let parts = path.split(separator: "?", maxSplits: 1)
        var query: [String: String] = [:]
        if parts.count == 2, let equals = parts[1].firstIndex(of: "=") {
            query[String(parts[1][..<equals])] = String(parts[1][parts[1].index(after: equals)...])
        }
        return router.answer(
            HTTPRequest(
                method: "GET", path: String(parts[0]), query: query,
                headers: ["host": "\(router.web.hostName):\(port)"].merging(headers) { _, new in new }), port: port)
    }

    static func post(_ router: Router, _ path: String, _ headers: [String: String]) -> HTTPResponse? {
        router.answer(
            HTTPRequest(
                method: "POST", path: path,
                headers: ["host": "\(router.web.hostName):\(port)"].merging(headers) { _, new in new },
                body: Array("x=1".utf8)), port: port)
    }

    static func header(_ response: HTTPResponse?, _ name: String) -> String? {
        response?.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// Signs in with a new login token; the session cookie as the browser sends it back.
    static func signIn(_ router: Router) throws -> String {
        let answer = get(router, "/login?token=\(router.web.newLoginToken())")
        let cookie = try #require(header(answer, "Set-Cookie"))
        return String(cookie.prefix { $0 != ";" })
    }

    @Test func escapingMakesEventTextInert() {
        #expect(
            HTML.escape("<script>\"a\"&'b'</script>") == "&lt;script&gt;&quot;a&quot;&amp;&#39;b&#39;&lt;/script&gt;")
        #expect(HTML.escape("a\u{0}b\u{1B}c\u{7F}d\u{85}e\tf\ng") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\tf\ng")
        #expect(HTML.escape("ünïcödé ✓ 😀") == "ünïcödé ✓ 😀")
        #expect(HTML.attribute("title", "\" onmouseover=\"x") == "title=\"&quot; onmouseover=&quot;x\"")
        #expect(HTML.urlComponent("a b/../?#é") == "a%20b%2F..%2F%3F%23%C3%A9")
        var html = HTML(raw: "<p>")
        html.text("</p><script>")
        #expect(html.markup == "<p><bdi>&lt;/p&gt;&lt;script&gt;</bdi>")
        // Bidirectional controls are shown, never obeyed, and each value is isolated (issue 41, item 4).
        #expect(HTML.escape("crash in \u{202e}txt.exe") == "crash in \\u{202e}txt.exe")
        #expect(HTML.escape("a\u{2066}b\u{2069}") == "a\\u{2066}b\\u{2069}")
        #expect(HTML.escape("שלום") == "שלום")
        var isolated = HTML()
        isolated.element("td", text: "\u{202e}fdp.exe")
        #expect(isolated.markup == "<td><bdi>\\u{202e}fdp.exe</bdi></td>")
    }

    @Test func aHostileEventIsTextOnEveryPage() throws {
        let router = try Self.router()
        let frame: JSONValue = [
            "platform": "native", "instruction_addr": "0x1000", "module": "<b>mod</b>", "in_app": true,
            "function": "<iframe src=//evil.example>\u{2067}", "filename": "</li><script>f()</script>", "lineno": 1,
        ]
        let properties: JSONValue = [
            "$exception_level": "<u>fatal</u>", "release": "<img src=x onerror=alert(1)>\u{202e}", "$os": "<marquee>",
            "$exception_list": [
                [
                    "type": "<script>alert(1)</script>", "value": "\"><svg onload=alert(2)>",
                    "mechanism": ["type": "<i>m</i>", "handled": false], "stacktrace": ["frames": [frame]],
                ]
            ],
            "$exception_breadcrumbs": [["timestamp": "<t>", "category": "<c>", "message": "<script>3</script>"]],
        ]
        let event = CollectorStore.NewEvent(
            token: "t", event: "$exception", distinctId: "<a href=//evil.example>", time: 1_796_000_000_000,
            insertId: "hostile", propertiesJSON: properties.jsonString)
        _ = try router.store.insert(events: [event], receivedAt: 1_796_000_000_000)
        let bearer = ["authorization": "Bearer page-secret"]
        for path in ["/", "/issues/1", "/events", "/events/1"] {
            let answer = try #require(Self.get(router, path, bearer))
            #expect(answer.status == 200, "\(path)")
            let page = String(decoding: answer.body, as: UTF8.self)
            for markup in [
                "<script", "<svg onload", "<iframe", "<img src=x", "<marquee", "<u>", "<i>m", "<b>mod", "<a href=//",
            ] {
                #expect(!page.contains(markup), "\(path) holds \(markup)")
            }
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "\(path)")
            // No explicit bidirectional control reaches a page raw (issue 41, item 4).
            #expect(
                !page.unicodeScalars.contains {
                    (0x202a...0x202e).contains($0.value) || (0x2066...0x2069).contains($0.value)
                }, "\(path)")
        }
        // The culprit (the in-app frame's function) on the list and the issue page, as text.
        for path in ["/", "/issues/1"] {
            let page = String(decoding: Self.get(router, path, bearer)?.body ?? [], as: UTF8.self)
            #expect(page.contains("&lt;iframe src=//evil.example&gt;"), "\(path): no culprit")
        }
        let page = String(decoding: Self.get(router, "/events/1", bearer)?.body ?? [], as: UTF8.self)
        for text in ["&lt;iframe src=//evil.example&gt;", "&lt;script&gt;3&lt;/script&gt;", "&lt;marquee&gt;"] {
            #expect(page.contains(text), "no \(text)")
        }
    }

    @Test func pagesNeedASessionFromAOneTimeLoginToken() throws {
        let router = try Self.router()
        let refused = Self.get(router, "/")
        #expect(refused?.status == 401)
        let advice = String(decoding: refused?.body ?? [], as: UTF8.self)
        #expect(advice.contains("login URL"))
        #expect(Self.get(router, "/events/1")?.status == 401)
        #expect(Self.get(router, WebStyle.path)?.status == 200)  // the stylesheet holds nothing
        #expect(Self.get(router, "/login?token=0123")?.status == 403)
        #expect(Self.get(router, "/login")?.status == 403)

        let token = router.web.newLoginToken()
        let login = Self.get(router, "/login?token=\(token)")
        // 303 to the issues, not a page that refreshes itself: what waits for a load (a screenshot) gets one.
        #expect(login?.status == 303)
        #expect(Self.header(login, "Location") == "/")
        let cookie = try #require(Self.header(login, "Set-Cookie"))
        #expect(cookie.hasPrefix("cohorly_session_\(Self.port)="))
        for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] { #expect(cookie.contains("; \(attribute)")) }
        #expect(Self.get(router, "/login?token=\(token)")?.status == 403, "a login token works once")

        let session = String(cookie.prefix { $0 != ";" })
        let page = Self.get(router, "/", ["cookie": "other=1; \(session)"])
        #expect(page?.status == 200)
        #expect(Self.header(page, "Content-Security-Policy")?.hasPrefix("default-src 'none'; style-src 'self'") == true)
        #expect(Self.header(page, "X-Content-Type-Options") == "nosniff")
        #expect(Self.header(page, "Content-Type") == "text/html; charset=utf-8")
        #expect(Self.get(router, "/", ["cookie": "\(session)0"])?.status == 401)
        #expect(
            Self.get(router, "/", ["cookie": "cohorly_session_1=\(session.split(separator: "=")[1])"])?.status == 401)
        // The collector's secret opens the pages too (scripts), a wrong one does not.
        #expect(Self.get(router, "/", ["authorization": "Bearer page-secret"])?.status == 200)
        #expect(Self.get(router, "/", ["authorization": "Bearer wrong"])?.status == 401)
    }

    /// Issue 41, item 2: a browser sends a host's cookies to every port of it, a neighbour's server's too. The
    /// session counts only on a request to the pages' own name, which is in no answer but the login's.
    @Test func theSessionCookieIsACredentialOnlyAtThePagesOwnHostName() throws {
        let router = try Self.router { $0.webActions = true }
        let session = try Self.signIn(router)
        #expect(router.web.hostName.hasSuffix(".localhost") && router.web.hostName.count == 50)
        #expect(try Self.router().web.hostName != router.web.hostName, "each collector has its own")
        #expect(Self.get(router, "/", ["cookie": session])?.status == 200)
        // The same cookie at every name a neighbour can reach the collector by: no page, no form.
        for host in [
            "127.0.0.1:\(Self.port)", "localhost:\(Self.port)", "127.0.0.1", "cohorly-0.localhost:\(Self.port)",
        ] {
            let page = Self.get(router, "/", ["cookie": session, "host": host])
            #expect(page?.status == 401 || page?.status == 421, "\(host)")
            let form = Self.post(
                router, "/logout",
                [
                    "cookie": session, "host": host, "origin": "http://\(host)", "sec-fetch-site": "same-origin",
                    "content-type": Router.formContentType,
                ])
            #expect(form?.status == 403 || form?.status == 421, "\(host)")
        }
        // …nor with the pages' name in Origin alone.
        let forged = Self.post(
            router, "/logout",
            [
                "cookie": session, "host": "127.0.0.1:\(Self.port)", "origin": router.web.origin,
                "sec-fetch-site": "same-origin", "content-type": Router.formContentType,
            ])
        #expect(forged?.status == 403)
        // At another name, a valid login URL goes on to the pages' name unspent; no other answer names it.
        let token = router.web.newLoginToken()
        let elsewhere = Self.get(router, "/login?token=\(token)", ["host": "127.0.0.1:\(Self.port)"])
        #expect(elsewhere?.status == 303)
        #expect(Self.header(elsewhere, "Location") == "\(router.web.origin)/login?token=\(token)")
        #expect(Self.header(elsewhere, "Set-Cookie") == nil)
        #expect(Self.get(router, "/login?token=\(token)")?.status == 303, "not spent by the redirect")
        for answer in [
            Self.get(router, "/login?token=\(String(repeating: "0", count: 64))", ["host": "127.0.0.1:\(Self.port)"]),
            Self.get(router, "/", ["host": "127.0.0.1:\(Self.port)"]), Self.get(router, "/", ["host": "evil.example"]),
        ] {
            let text = String(decoding: answer?.body ?? [], as: UTF8.self)
            #expect(answer?.status != 200 && !text.contains(router.web.hostName))
            #expect(answer?.headers.contains { $0.1.contains(router.web.hostName) } == false)
        }
    }

    @Test func aNewLoginURLNeedsTheSecret() throws {
        let router = try Self.router()
        let host = ["host": "127.0.0.1:\(Self.port)"]
        let refused = router.answer(HTTPRequest(method: "POST", path: "/api/web/login", headers: host), port: Self.port)
        #expect(refused?.status == 401)
        let answer = router.answer(
            HTTPRequest(
                method: "POST", path: "/api/web/login",
                headers: host.merging(["authorization": "Bearer page-secret"]) { $1 }),
            port: Self.port)
        let url = try #require(JSONValue(bytes: answer?.body ?? [])?["login_url"]?.stringValue)
        #expect(url.hasPrefix("\(router.web.origin)/login?token="))
        let token = String(url.dropFirst("\(router.web.origin)/login?token=".count))
        #expect(token.count == 64)
        #expect(Self.get(router, "/login?token=\(token)")?.status == 303)
    }

    @Test func formsMustComeFromThisOriginWithTheSession() throws {
        let router = try Self.router()
        let session = try Self.signIn(router)
        let form = ["content-type": Router.formContentType, "cookie": session]
        func status(_ extra: [String: String], base: [String: String] = form) -> Int? {
            Self.post(router, "/logout", base.merging(extra) { _, new in new })?.status
        }
        #expect(status([:]) == 403, "no Origin")
        #expect(status(["origin": "null"]) == 403)
        #expect(status(["origin": "http://evil.example"]) == 403)
        #expect(status(["origin": "http://127.0.0.1:\(Self.port + 1)"]) == 403, "another port")
        #expect(status(["origin": router.web.origin, "sec-fetch-site": "same-site"]) == 403)
        #expect(status(["origin": router.web.origin, "sec-fetch-site": "cross-site"]) == 403)
        #expect(status(["origin": router.web.origin, "content-type": "text/plain"]) == 415)
        #expect(
            status(["origin": router.web.origin], base: ["content-type": Router.formContentType]) == 403, "no session")
        #expect(Self.get(router, "/", ["cookie": session])?.status == 200, "no refused form ended the session")
        let out = Self.post(
            router, "/logout", form.merging(["origin": router.web.origin, "sec-fetch-site": "same-origin"]) { $1 })
        #expect(out?.status == 303)
        #expect(Self.header(out, "Set-Cookie")?.contains("Max-Age=0") == true)
        #expect(Self.get(router, "/", ["cookie": session])?.status == 401, "logged out")
        #expect(
            router.answer(HTTPRequest(method: "PUT", path: "/", headers: ["host": "127.0.0.1"]), port: 4000)?.status
                == 405)
    }

    @Test func theHostCheckAndTheRateLimitHoldForThePages() throws {
        let router = try Self.router { $0.rateLimit = CollectorConfiguration.RateLimit(requests: 2, window: 600) }
        let session = try Self.signIn(router)  // the first request
        #expect(Self.get(router, "/", ["cookie": session, "host": "rebound.example:\(Self.port)"])?.status == 421)
        #expect(Self.get(router, "/", ["cookie": session])?.status == 200)
        let limited = Self.get(router, "/", ["cookie": session])
        #expect(limited?.status == 429)
        #expect(Self.header(limited, "Retry-After") != nil)
    }
    /// A collector's router holding one crash-like event of release `release` (grouped into issue 1).
    static func routerWithAnIssue(webActions: Bool) throws -> Router {
        let router = try Self.router { $0.webActions = webActions }
        let properties: JSONValue = [
            "$exception_level": "fatal", "release": "1.2.0",
            "$exception_list": [["type": "OrderError", "value": "declined", "mechanism": ["type": "handled"]]],
        ]
        let event = CollectorStore.NewEvent(
            token: "t", event: "$exception", distinctId: "u1", time: 1_796_000_000_000, insertId: "one",
            propertiesJSON: properties.jsonString)
        _ = try router.store.insert(events: [event], receivedAt: 1_796_000_000_000)
        return router
    }

    @Test func theIssuePagesShowCountsChartsAndTheLatestOccurrence() throws {
        let router = try Self.routerWithAnIssue(webActions: false)
        let session = try Self.signIn(router)
        let list = String(decoding: Self.get(router, "/", ["cookie": session])?.body ?? [], as: UTF8.self)
        #expect(list.contains("<a href=\"/issues/1\"><bdi>OrderError</bdi></a>"))
        #expect(list.contains("<td class=\"num\">1</td>"))
        #expect(list.contains("<svg class=\"chart\""))
        let filtered = String(
            decoding: Self.get(router, "/?state=resolved", ["cookie": session])?.body ?? [], as: UTF8.self)
        #expect(!filtered.contains("/issues/1"))
        #expect(filtered.contains("<option value=\"resolved\" selected>"))
        let answer = Self.get(router, "/issues/1", ["cookie": session])
        #expect(answer?.status == 200)
        let page = String(decoding: answer?.body ?? [], as: UTF8.self)
        for text in [
            "<h1><bdi>OrderError</bdi></h1>", "declined", "<dt>Occurrences</dt><dd><bdi>1</bdi></dd>",
            "<dt>Users</dt><dd><bdi>1</bdi></dd>",
            "<svg class=\"chart bars\"", ">1.2.0</text>", "<a href=\"/events/1\">",
        ] {
            #expect(page.contains(text), "no \(text)")
        }
        #expect(!page.contains("<form method=\"post\" action=\"/issues/1/"), "read-only by default")
        #expect(Self.get(router, "/issues/2", ["cookie": session])?.status == 404)
        let occurrence = String(decoding: Self.get(router, "/events/1", ["cookie": session])?.body ?? [], as: UTF8.self)
        #expect(occurrence.contains("<a href=\"/issues/1\">issue 1</a>"))
    }

    @Test func issueFormsChangeTheStateOnlyWhenTheCollectorAllowsIt() throws {
        let readOnly = try Self.routerWithAnIssue(webActions: false)
        let readOnlySession = try Self.signIn(readOnly)
        let headers = [
            "content-type": Router.formContentType, "origin": readOnly.web.origin, "sec-fetch-site": "same-origin",
        ]
        let refused = Self.post(readOnly, "/issues/1/resolve", headers.merging(["cookie": readOnlySession]) { $1 })
        #expect(refused?.status == 403)
        #expect(try IssueQueries(store: readOnly.store).issue(id: 1)?.state == .open)

        let router = try Self.routerWithAnIssue(webActions: true)
        let session = headers.merging(["cookie": try Self.signIn(router), "origin": router.web.origin]) { $1 }
        func post(_ path: String, _ body: String, _ extra: [String: String] = [:]) -> HTTPResponse? {
            router.answer(
                HTTPRequest(
                    method: "POST", path: path,
                    headers: ["host": "\(router.web.hostName):\(Self.port)"].merging(session.merging(extra) { $1 }) {
                        $1
                    },
                    body: Array(body.utf8)), port: Self.port)
        }
        let issues = IssueQueries(store: router.store)
        // Another origin changes nothing.
        #expect(post("/issues/1/resolve", "in_release=2.0.0", ["origin": "http://evil.example"])?.status == 403)
        #expect(try issues.issue(id: 1)?.state == .open)
        let resolved = post("/issues/1/resolve", "in_release=2.0.0+build%2B1")
        #expect(resolved?.status == 303)
        #expect(Self.header(resolved, "Location") == "/issues/1")
        #expect(try issues.issue(id: 1)?.state == .resolved)
        #expect(try issues.issue(id: 1)?.resolvedInRelease == "2.0.0 build+1")
        let page = String(
            decoding: Self.get(router, "/issues/1", ["cookie": session["cookie"] ?? ""])?.body ?? [], as: UTF8.self)
        #expect(page.contains("<form method=\"post\" action=\"/issues/1/reopen\""))
        #expect(page.contains("resolved in 2.0.0 build+1"))
        #expect(page.contains("open → resolved"))
        #expect(post("/issues/1/reopen", "")?.status == 303)
        #expect(try issues.issue(id: 1)?.state == .open)
        #expect(post("/issues/1/mute", "hours=0")?.status == 400)
        #expect(post("/issues/1/mute", "hours=&occurrences=")?.status == 400)
        #expect(post("/issues/1/mute", "hours=2&occurrences=3")?.status == 303)
        let muted = try #require(try issues.issue(id: 1))
        #expect(muted.state == .muted && muted.mutedForOccurrences == 3 && muted.mutedUntil != nil)
        #expect(post("/issues/9/reopen", "")?.status == 404)
        #expect(post("/issues/1/delete", "")?.status == 404)
    }

    @Test func theIssuePagesShowTheCulpritAndPageThroughEveryOccurrence() throws {
        let router = try Self.router()
        let frame: JSONValue = [
            "instruction_addr": "0x1000", "in_app": true, "function": "Shop.pay()", "instruction_addr_kind": "pc",
        ]
        let properties: JSONValue = [
            "$exception_level": "error", "release": "1.2.0",
            "$exception_list": [
                [
                    "type": "OrderError", "value": "declined", "mechanism": ["type": "handled"],
                    "stacktrace": ["frames": [frame]],
                ]
            ],
        ]
        let events = (0..<45).map { n in
            CollectorStore.NewEvent(
                token: "t", event: "$exception", distinctId: "u\(n % 3)", time: 1_796_000_000_000 + Int64(n) * 1000,
                insertId: "o\(n)", propertiesJSON: properties.jsonString)
        }
        _ = try router.store.insert(events: events, receivedAt: 1_796_000_000_000)
        let session = ["cookie": try Self.signIn(router)]
        func page(_ path: String) -> String {
            String(decoding: Self.get(router, path, session)?.body ?? [], as: UTF8.self)
        }
        let list = page("/")
        #expect(list.contains("<div class=\"culprit muted\">in <code><bdi>Shop.pay()</bdi></code></div>"), "\(list)")
        #expect(page("/issues/1").contains("<dt>Culprit</dt><dd><bdi>Shop.pay()</bdi></dd>"))
        // The occurrences 20 at a time, newest first, each page linking to the next until the last.
        func links(_ html: String) -> (events: [Int64], older: String?, newest: Bool) {
            let start = html.range(of: "<h2 id=\"occurrences\">")?.upperBound ?? html.endIndex
            let part = html[start...]
            let events = part.matches(of: /<li><a href="\/events\/(\d+)">/).compactMap { Int64($0.output.1) }
            let older = part.firstMatch(of: /<a class="older" href="([^"]+)">Older<\/a>/).map { String($0.output.1) }
            return (events, older, part.contains("<a class=\"newest\" href=\"/issues/1#occurrences\">Newest</a>"))
        }
        var seen: [Int64] = []
        var next: String? = "/issues/1"
        var pages: [(count: Int, newest: Bool)] = []
        while let path = next, pages.count < 5 {
            let shown = links(page(String(path.prefix { $0 != "#" })))
            seen += shown.events
            pages.append((shown.events.count, shown.newest))
            next = shown.older
        }
        #expect(pages.map(\.count) == [20, 20, 5], "\(pages)")
        #expect(pages.map(\.newest) == [false, true, true])
        #expect(seen == (1...45).reversed().map { Int64($0) }, "every occurrence once, newest first: \(seen)")
        // A cursor that is not an occurrence of the issue shows none; one that is not a number is refused.
        #expect(links(page("/issues/1?before=999")).events.isEmpty)
        #expect(page("/issues/1?before=999").contains("No older occurrences."))
        #expect(Self.get(router, "/issues/1?before=x", session)?.status == 400)
        #expect(Self.get(router, "/issues/1?before=-1", session)?.status == 400)
    }

    @Test func formFieldsDecode() {
        #expect(
            WebForm.fields(Array("a=1&b=x+y%21&c=&d&=e&f=%E2%9C%93&g=%zz".utf8)) == [
                "a": "1", "b": "x y!", "c": "", "d": "", "f": "✓",
            ])
    }
}
