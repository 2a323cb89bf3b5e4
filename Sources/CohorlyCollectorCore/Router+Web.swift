import Foundation

/// The web pages' routes, reached only after `webRefusal` (Router+WebPolicy.swift) let the request through:
///
/// - `GET /login?token=…` spends a one-time login token, sets the session cookie and sends the browser on to `/`
///   (303); asked at another of the collector's names (`127.0.0.1`), it sends the browser to the same URL at the
///   pages' own host name, where the cookie is kept, without spending the token (303).
/// - `POST /logout` ends the session.
/// - `GET /` (or `/issues`) the issues; `GET /issues/<id>` one issue; `POST /issues/<id>/resolve|reopen|mute`
///   its forms (with `--web-actions`).
/// - `GET /events` the latest occurrences; `GET /events/<id>` (or `/events/<insert id>`) one occurrence,
///   symbolicated; `GET /events/<id>.json` the event as stored, a download.
/// - `GET /web.css` the stylesheet.
/// - `POST /api/web/login` (an API route: Origin and the secret are checked like every `/api` route) answers a
///   new login URL.
extension Router {
    /// The answer to a web request that passed `webRefusal`.
    func webPage(_ request: HTTPRequest) -> HTTPResponse {
        do {
            switch (request.method, request.path) {
            case ("GET", WebStyle.path): return WebStyle.response
            case ("GET", "/login"): return login(request)
            case ("POST", "/logout"): return logout(request)
            case ("GET", "/"), ("GET", "/issues"): return try issueList(request)  // WebIssueList.swift
            case ("GET", "/events"): return try occurrenceList(request)
            case ("GET", _) where request.path.hasPrefix("/events/"):  // WebOccurrenceNavigation.swift
                return try occurrence(reference: request.path.dropFirst("/events/".count)) ?? notFound
            case (_, _) where request.path.hasPrefix("/issues/"):  // WebIssuePage.swift
                let parts = request.path.dropFirst("/issues/".count).split(
                    separator: "/", omittingEmptySubsequences: false)
                guard let first = parts.first, let id = Int64(first), id > 0, parts.count <= 2 else { return notFound }
                if request.method == "GET", parts.count == 1 { return try issuePage(id: id, request) ?? notFound }
                if request.method == "POST", parts.count == 2 { return issueAction(request, id: id, action: parts[1]) }
                return notFound
            default: return notFound
            }
        } catch let bad as BadRequest {
            return WebPage.refusal(400, title: "Bad request", bad.message)
        } catch {
            return WebPage.refusal(500, title: "Storage error", "storage error: \(error)")
        }
    }

    private var notFound: HTTPResponse { WebPage.refusal(404, title: "Not found", "no such page") }

    /// Spends the token and answers `303 See Other` to `/` with the session cookie, so a browser, and anything
    /// that waits for a page's load (headless Chromium's `--screenshot`), arrives at the issues at once. The
    /// cookie is `SameSite=Lax`: a browser sends a Strict cookie along no redirect chain that began on another
    /// site (a link in a chat, a mail), and Lax still keeps it off every cross-site request but a top-level
    /// navigation, which only reads (what changes state is a POST, checked by Origin as well).
    ///
    /// Asked at another name of the collector, a valid token is sent on to the pages' host name (only who holds
    /// a login token learns that name) and an invalid one refused as there.
    private func login(_ request: HTTPRequest) -> HTTPResponse {
        let invalid = WebPage.refusal(
            403, title: "Login URL not valid",
            "This login URL was used already or was not made by this collector (they work once, and a restarted"
                + " collector prints a new one).")
        guard let token = request.query["token"] else { return invalid }
        guard web.isWebHost(request.header("Host")) else {
            guard web.isUnspent(loginToken: token) else { return invalid }
            return HTTPResponse(
                status: 303,
                headers: WebPage.securityHeaders + [
                    ("Location", "\(web.origin)/login?token=\(token)"), ("Content-Type", "text/plain; charset=utf-8"),
                ], body: Array("the pages are at \(web.origin)/\n".utf8))
        }
        guard let session = web.spend(loginToken: token) else { return invalid }
        let cookie =
            "\(web.cookieName)=\(session); HttpOnly; SameSite=Lax; Path=/; Max-Age=\(Int(WebSessions.sessionLifetime))"
        return HTTPResponse(
            status: 303,
            headers: WebPage.securityHeaders + [
                ("Location", "/"), ("Content-Type", "text/plain; charset=utf-8"), ("Set-Cookie", cookie),
            ], body: Array("signed in\n".utf8))
    }

    private func logout(_ request: HTTPRequest) -> HTTPResponse {
        for session in Self.cookies(request, named: web.cookieName) { web.end(session: session) }
        return HTTPResponse(
            status: 303,
            headers: WebPage.securityHeaders + [
                ("Location", "/"), ("Content-Type", "text/plain; charset=utf-8"),
                ("Set-Cookie", "\(web.cookieName)=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0"),
            ], body: Array("signed out\n".utf8))
    }

    /// `POST /api/web/login`: `{"login_url": "http://<pages' host name>:<port>/login?token=…"}`, a new one-time
    /// URL.
    func newLoginURL(_ request: HTTPRequest) -> HTTPResponse {
        .json(200, ["login_url": .string("\(web.origin)/login?token=\(web.newLoginToken())")])
    }
}
