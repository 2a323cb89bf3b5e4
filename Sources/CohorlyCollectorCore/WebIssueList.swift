import CohorlyCollectorAPI
import Foundation

/// `GET /` (also `/issues`): the issues, filtered and sorted as `cohorly issues list` does (`app`, `q` — the
/// search, docs/issues.md —, `state`, `level`, `release`, `sort` from the query, the form at the top), 50 at most,
/// each with its short id, state, level, culprit, counts, a chart of its last 14 days and its first and last
/// release; above them a chart of every issue's last 14 days. A search that does not parse answers 400 with the
/// form and the term it names.
extension Router {
    /// Issues a list page shows.
    static let issuesPerPage = 50
    /// Days the charts of the list cover.
    static let chartDays = 14

    func issueList(_ request: HTTPRequest) throws -> HTTPResponse {
        var filter = IssueFilter(
            state: request.query["state"].flatMap(IssueState.init(rawValue:)),
            level: Self.nonEmpty(request.query["level"]), release: Self.nonEmpty(request.query["release"]),
            app: Self.nonEmpty(request.query["app"]))
        let sort = request.query["sort"].flatMap(IssueSort.init(rawValue:)) ?? .lastSeen
        let queries = IssueQueries(store: store)
        let now = Int64(Date().timeIntervalSince1970)
        let search = Self.nonEmpty(request.query["q"]) ?? ""
        let apps = try queries.apps().map(\.app)
        do {
            filter.search = try IssueSearch.parse(search, now: now * 1000)
        } catch {
            var body = Self.filterForm(filter, search: search, apps: apps, sort: sort)
            body.raw("<p class=\"error\" role=\"alert\">")
            body.text(error.description)
            body.raw("</p>")
            return WebPage.response(400, WebPage.document(title: "Issues", body))
        }
        let issues = try queries.list(filter, sort: sort, limit: Self.issuesPerPage)
        let days = Self.dayLabels(now: now)
        var body = Self.filterForm(filter, search: search, apps: apps, sort: sort)
        let all = try queries.occurrencesPerDay(id: nil, days: Self.chartDays, now: now)
        body.raw("<p class=\"muted\">Occurrences of every issue, the last \(Self.chartDays) days (UTC):</p>")
        body.append(SVGChart.columns(all, labels: days, width: 420, height: 48, title: "Occurrences per day"))
        body.raw("<div class=\"scroll\"><table class=\"issues\"><thead><tr><th>Issue</th><th>State</th>")
        body.raw("<th class=\"num\">Events</th><th class=\"num\">Users</th><th class=\"wide\">14 days</th>")
        body.raw("<th class=\"wide\">Releases</th><th>Last seen</th></tr></thead><tbody>")
        for issue in issues {
            var marks = HTML(raw: " <span class=\"short-id\">")
            marks.text(issue.shortId)
            marks.raw("</span> ")
            marks.append(Self.levelBadge(issue.level))
            body.titleCell(
                href: "/issues/\(issue.id)", title: issue.title, marks: marks, subtitle: issue.displaySubtitle)
            body.append(Self.culprit(issue))
            body.raw("</td><td>")
            body.append(Self.stateBadge(issue.state))
            body.raw("</td><td class=\"num\">\(issue.occurrences)</td><td class=\"num\">\(issue.users)</td>")
            body.raw("<td class=\"wide\">")
            let counts = try queries.occurrencesPerDay(id: issue.id, days: Self.chartDays, now: now)
            body.append(SVGChart.columns(counts, labels: days, width: 84, height: 20, title: "Last 14 days"))
            body.raw("</td><td class=\"wide\">")
            body.text(Self.releaseRange(issue))
            body.raw("</td><td>")
            body.text(WebPage.time(milliseconds: issue.lastSeen * 1000))
            body.raw("</td></tr>")
        }
        body.raw("</tbody></table></div>")
        if issues.isEmpty {
            body.raw("<p class=\"muted\">No issue matches. Crashes, handled errors and hangs appear here as they ")
            body.raw("arrive, one issue per kind of failure.</p>")
        }
        return WebPage.response(200, WebPage.document(title: "Issues", body))
    }

    /// The list's filter form (a GET to `/`, so the filtered list has its own URL): the search box, the app
    /// selector (`apps`: the apps that have issues), state, sort, level and release.
    static func filterForm(_ filter: IssueFilter, search: String, apps: [String], sort: IssueSort) -> HTML {
        var html = HTML(raw: "<form method=\"get\" action=\"/\" class=\"actions\">")
        html.raw("<input type=\"search\" name=\"q\" size=\"36\" aria-label=\"Search\" ")
        html.raw("placeholder=\"search: text is:open level:fatal function:pay lastSeen:-24h\" ")
        html.raw(HTML.attribute("value", search))
        html.raw("><select name=\"app\" aria-label=\"App\"><option value=\"\">every app</option>")
        var names = apps.filter { !$0.isEmpty }
        if let app = filter.app, !names.contains(app) { names.append(app) }
        for app in names {
            html.raw("<option " + HTML.attribute("value", app) + (filter.app == app ? " selected>" : ">"))
            html.text(app)
            html.raw("</option>")
        }
        html.raw("</select><select name=\"state\">")
        html.raw("<option value=\"\">any state</option>")
        for state in IssueState.allCases {
            html.raw("<option value=\"\(state.rawValue)\"\(filter.state == state ? " selected" : "")>\(state)</option>")
        }
        html.raw("</select><select name=\"sort\">")
        for (value, name) in [(IssueSort.lastSeen, "last seen"), (.occurrences, "most events"), (.users, "most users")]
        {
            html.raw("<option value=\"\(value.rawValue)\"\(sort == value ? " selected" : "")>\(name)</option>")
        }
        html.raw("</select><input name=\"level\" placeholder=\"level\" size=\"7\" ")
        html.raw(HTML.attribute("value", filter.level ?? ""))
        html.raw("><input name=\"release\" placeholder=\"release\" size=\"14\" ")
        html.raw(HTML.attribute("value", filter.release ?? ""))
        html.raw("><button type=\"submit\">Filter</button></form>")
        return html
    }

    /// Where the issue's stack says it failed (its top in-app frame), unless the subtitle already says it.
    static func culprit(_ issue: IssueSummary) -> HTML {
        var html = HTML()
        guard !issue.culprit.isEmpty, issue.culprit != issue.subtitle else { return html }
        html.raw("<div class=\"culprit muted\">in <code>")
        html.text(issue.displayCulprit)
        html.raw("</code></div>")
        return html
    }

    static func stateBadge(_ state: IssueState) -> HTML {
        HTML(raw: "<span class=\"badge state-\(state.rawValue)\">\(state.rawValue)</span>")
    }

    /// `1.0.0 → 1.2.0`, one release alone, or nothing.
    static func releaseRange(_ issue: IssueSummary) -> String {
        switch (issue.firstRelease, issue.lastRelease) {
        case (let first?, let last?) where first != last: "\(first) → \(last)"
        case (let first?, _): first
        case (nil, let last?): last
        case (nil, nil): ""
        }
    }

    /// The UTC dates of the chart's days, oldest first (`2026-12-02`).
    static func dayLabels(now: Int64) -> [String] {
        let today = now / 86_400
        return (0..<Int64(chartDays)).map { offset in
            String(WebPage.time(milliseconds: (today - Int64(chartDays) + 1 + offset) * 86_400_000).prefix(10))
        }
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }
}
