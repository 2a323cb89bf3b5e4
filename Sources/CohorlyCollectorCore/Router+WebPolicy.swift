import Foundation

/// What a request for a web page must pass, checked by `screen` with every other rule (the `Host` check before
/// it, the server's body limit, header deadline and connection caps around it), as soon as the headers arrived:
///
/// - The rate limit, when one is configured, counts page requests too (429).
/// - Only `GET` and `POST` (405).
/// - The stylesheet and `GET /login` need no session; every other page needs the session cookie on a request to
///   the pages' own host name (`WebSessions.hostName`: the cookie sent to any other name, `127.0.0.1` included,
///   counts for nothing), or `Authorization: Bearer <secret>` when the collector has a secret (else 401 and how to
///   sign in).
/// - A `POST` (a form on a page: log out, resolve, reopen, mute) must come from a page of this collector: the
///   `Origin` of the pages' host (a missing one is refused too), `Sec-Fetch-Site: same-origin` when the browser
///   sends it (a page on another port of this host is same-site, not same-origin), a form's content type, and
///   the session (a bearer secret is not enough: the API does the same for scripts). Else 403 or 415.
extension Router {
    /// Whether `path` is one of the web pages' (the rest of the collector's routes never are).
    static func isWebPath(_ path: String) -> Bool {
        path == "/" || path == "/login" || path == "/logout" || path == WebStyle.path || path == "/events"
            || path.hasPrefix("/events/") || path == "/issues" || path.hasPrefix("/issues/")
    }

    /// The form content type the pages' `POST`s carry.
    static let formContentType = "application/x-www-form-urlencoded"

    /// Nil when the web request may go on, else its refusal.
    func webRefusal(_ request: HTTPRequest, port: UInt16) -> HTTPResponse? {
        if let wait = rateLimiter?.admit(request.clientAddress) {
            let seconds = String(Int(exactly: wait.rounded(.up)) ?? 1)
            return WebPage.refusal(429, title: "Slow down", "rate limited", headers: [("Retry-After", seconds)])
        }
        switch request.method {
        case "GET":
            if request.path == WebStyle.path || request.path == "/login" { return nil }
            if hasSession(request, port: port) { return nil }
            if let secret = configuration.adminToken, Self.credentialMatches(request.header("Authorization"), secret) {
                return nil
            }
            return WebPage.signInNeeded
        case "POST":
            guard let origin = request.header("Origin"), origin.lowercased().hasPrefix("http://"),
                web.isWebHost(String(origin.dropFirst("http://".count)), port: port)
            else {
                return WebPage.refusal(
                    403, title: "Refused",
                    "cross-origin form refused (Origin \(request.header("Origin")?.prefix(80) ?? "missing"))")
            }
            if let site = request.header("Sec-Fetch-Site"), site != "same-origin" {
                return WebPage.refusal(
                    403, title: "Refused", "cross-site form refused (Sec-Fetch-Site \(site.prefix(40)))")
            }
            let mediaType = request.header("Content-Type")?.split(separator: ";").first
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard mediaType == Self.formContentType else {
                return WebPage.refusal(415, title: "Refused", "content type must be \(Self.formContentType)")
            }
            guard hasSession(request, port: port) else {
                return WebPage.refusal(403, title: "Refused", "no session (web form)")
            }
            return nil
        default:
            return WebPage.refusal(
                405, title: "Not allowed", "method \(request.method.prefix(16)) not allowed on the web pages",
                headers: [("Allow", "GET, POST")])
        }
    }

    /// Whether `request`, sent to the pages' host name, carries a live session cookie.
    func hasSession(_ request: HTTPRequest, port: UInt16) -> Bool {
        web.isWebHost(request.header("Host"), port: port)
            && Self.cookies(request, named: web.cookieName).contains { web.isValid(session: $0) }
    }

    /// The values of the cookies called `name` in `request` (a browser may send one name more than once).
    static func cookies(_ request: HTTPRequest, named name: String) -> [String] {
        guard let header = request.header("Cookie") else { return [] }
        return header.split(separator: ";").compactMap { pair in
            let trimmed = pair.trimmingCharacters(in: .whitespaces)
            guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { return nil }
            return String(trimmed[trimmed.index(after: equals)...])
        }
    }
}
