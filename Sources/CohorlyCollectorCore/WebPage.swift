import Foundation

/// The frame every web page shares (head, header bar, stylesheet link) and the headers every web answer
/// carries. Nothing loads from another origin: one stylesheet served by the collector (`WebStyle`), charts as
/// inline SVG, no script at all, and a Content-Security-Policy that forbids everything else.
enum WebPage {
    /// `default-src 'none'` (nothing loads but what is allowed below), the one stylesheet from this origin, the
    /// empty `data:` icon (so the browser asks for no favicon), forms that post only here, never framed, no `<base>` (relative links cannot be redirected elsewhere).
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src data:; form-action 'self'; frame-ancestors 'none'; "
        + "base-uri 'none'"

    /// The headers of every web answer but the body's type.
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        // No referrer to any other origin. Not `no-referrer`: under it a browser sends `Origin: null` on the
        // pages' own form posts, and the Origin check could no longer tell them from a foreign page's.
        ("Referrer-Policy", "same-origin"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
        // The pages hold crash data: no browser or proxy keeps a copy.
        ("Cache-Control", "no-store"),
    ]

    /// A whole page: `title` (escaped) in the head and as the first heading, `body` under it. `signedIn` adds the
    /// navigation and the log-out button; `head` is the page's own extra markup for the head.
    static func document(title: String, signedIn: Bool = true, head: String = "", _ body: HTML) -> HTML {
        var page = HTML(
            raw: "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                + "<link rel=\"icon\" href=\"data:,\">" + head + "<title>")
        page.plainText(title)
        page.raw(" · Cohorly collector</title><link rel=\"stylesheet\" href=\"\(WebStyle.path)\"></head><body>")
        page.raw("<header class=\"bar\"><a class=\"brand\" href=\"/\">Cohorly collector</a>")
        if signedIn {
            page.raw("<nav><a href=\"/\">Issues</a> <a href=\"/events\">Occurrences</a></nav>")
            page.raw(
                "<form method=\"post\" action=\"/logout\" class=\"logout\"><button type=\"submit\">Log out</button>"
                    + "</form>")
        }
        page.raw("</header><main><h1>")
        page.text(title)
        page.raw("</h1>")
        page.append(body)
        page.raw("</main></body></html>\n")
        return page
    }

    /// `page` as an HTML answer with the security headers (and `headers`).
    static func response(_ status: Int, _ page: HTML, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + securityHeaders + headers,
            body: Array(page.markup.utf8))
    }

    /// A short page saying why the request was refused (the reason also goes to the request log).
    static func refusal(_ status: Int, title: String, _ message: String, headers: [(String, String)] = [])
        -> HTTPResponse
    {
        var body = HTML()
        body.element("p", text: message)
        var answer = response(status, document(title: title, signedIn: false, body), headers: headers)
        answer.reason = message
        return answer
    }

    /// The answer to a page asked for without a session: 401 and how to get one.
    static var signInNeeded: HTTPResponse {
        var body = HTML()
        body.raw("<p>This page needs a session. Open the login URL that <code>cohorly serve</code> printed when it ")
        body.raw("started (<code>http://…/login?token=…</code>); it works once. For a new one, ask the collector ")
        body.raw("with its secret: <code>curl -X POST -H \"Authorization: Bearer $SECRET\" ")
        body.raw("http://HOST:PORT/api/web/login</code>.</p>")
        var answer = response(401, document(title: "Sign in", signedIn: false, body))
        answer.reason = "no session (web page)"
        return answer
    }

    /// `milliseconds` since the epoch as `2026-12-02 00:44:52 UTC`.
    static func time(milliseconds: Int64) -> String {
        let seconds = time_t(milliseconds / 1000)
        var parts = tm()
        var copy = seconds
        guard gmtime_r(&copy, &parts) != nil else { return String(milliseconds) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : String(value) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC"
    }
}
