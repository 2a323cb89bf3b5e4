import CohorlyCrashModel
import Foundation

/// `GET /issues/<id>`: one issue — its state, culprit and counts, charts of its occurrences per day and per
/// release, the state changes, its latest occurrence symbolicated (as `/events/<id>` shows it) and links to its
/// occurrences, 20 at a time (`?before=<event id>`: the 20 after that one, *Older* and *Newest* between pages); and,
/// when the collector allows it (`cohorly serve --web-actions`), the forms that resolve, reopen or mute it
/// (`POST /issues/<id>/resolve|reopen|mute`, IssueActions).
extension Router {
    /// Occurrences an issue page links to at once (`?before=<event id>` shows the ones after that one).
    static let occurrencesPerIssuePage = 20

    func issuePage(id: Int64, _ request: HTTPRequest) throws -> HTTPResponse? {
        let before = try request.integer("before", in: QueryLimits.rowId).map(Int64.init)
        let queries = IssueQueries(store: store)
        guard let issue = try queries.issue(id: id) else { return nil }
        let now = Int64(Date().timeIntervalSince1970)
        var body = HTML(raw: "<p class=\"sub\">")
        body.text(issue.displaySubtitle)
        body.raw("</p><p>")
        body.append(Self.stateBadge(issue.state))
        body.raw(" ")
        body.append(Self.levelBadge(issue.level))
        body.raw("</p>")
        body.append(Self.issueFacts(issue))
        if configuration.webActions { body.append(Self.actionForms(issue)) }
        body.raw("<h2>Occurrences per day</h2>")
        let perDay = try queries.occurrencesPerDay(id: id, days: Self.chartDays, now: now)
        body.append(
            SVGChart.columns(perDay, labels: Self.dayLabels(now: now), width: 420, height: 60, title: "Per day"))
        let perRelease = try queries.occurrencesPerRelease(id: id)
        if !perRelease.isEmpty {
            body.raw("<h2>Occurrences per release</h2>")
            body.append(
                SVGChart.bars(perRelease.map { ($0.release, $0.count) }, width: 420, title: "Per release"))
        }
        body.append(Self.tagBreakdowns(try queries.breakdowns(id: id)))
        body.append(Self.transitionTable(try queries.transitions(id: id)))
        if let latest = try storedEvent(id: issue.latestEventId) {
            let facts = OccurrenceFacts(latest)
            let crash = crashes.symbolicate(latest)
            body.raw("<h2>Latest occurrence</h2><p><a href=\"/events/\(latest.id)\">")
            body.text(WebPage.time(milliseconds: latest.time))
            body.raw("</a> — ")
            body.text(crash.reason)
            body.raw("</p>")
            body.append(Self.stacks(crash))
            body.append(Self.breadcrumbs(facts.properties[CapturedException.breadcrumbsProperty]?.arrayValue ?? []))
            body.append(Self.factList(facts, event: latest))
        }
        // One more than a page: whether there are older ones.
        let ids = try queries.occurrenceIds(id: id, limit: Self.occurrencesPerIssuePage + 1, before: before)
        let page = Array(ids.prefix(Self.occurrencesPerIssuePage))
        body.append(
            try occurrenceLinks(page, issue: issue, after: before, older: ids.count > page.count ? page.last : nil))
        return WebPage.response(200, WebPage.document(title: issue.title, body))
    }

    static func issueFacts(_ issue: IssueSummary) -> HTML {
        var state = issue.state.rawValue
        if let release = issue.resolvedInRelease, issue.state != .open { state += " (resolved in \(release))" }
        if issue.state == .muted {
            if let until = issue.mutedUntil { state += " until \(WebPage.time(milliseconds: until * 1000))" }
            if let left = issue.mutedForOccurrences { state += " for \(left) more occurrence\(left == 1 ? "" : "s")" }
        }
        let rows: [(String, String?)] = [
            ("Short id", issue.shortId.isEmpty ? nil : issue.shortId), ("App", issue.app.isEmpty ? nil : issue.app),
            ("State", state),
            ("Culprit", issue.displayCulprit), ("Occurrences", String(issue.occurrences)),
            ("Users", String(issue.users)),
            ("First seen", WebPage.time(milliseconds: issue.firstSeen * 1000)),
            ("Last seen", WebPage.time(milliseconds: issue.lastSeen * 1000)),
            ("First release", issue.firstRelease), ("Last release", issue.lastRelease),
            ("Mechanism", issue.mechanism), ("Fingerprint", issue.fingerprint),
        ]
        var html = HTML()
        html.facts(rows)
        return html
    }

    /// Resolve (now or in a release), reopen, mute (for hours and/or occurrences): plain POST forms.
    static func actionForms(_ issue: IssueSummary) -> HTML {
        let action = "/issues/\(issue.id)"
        var html = HTML(raw: "<h2>Change its state</h2>")
        if issue.state != .resolved {
            html.raw("<form method=\"post\" action=\"\(action)/resolve\" class=\"actions\">")
            html.raw("<input name=\"in_release\" size=\"16\" placeholder=\"in release (optional)\">")
            html.raw("<button type=\"submit\">Resolve</button></form>")
        }
        if issue.state != .open {
            html.raw("<form method=\"post\" action=\"\(action)/reopen\" class=\"actions\">")
            html.raw("<button type=\"submit\">Reopen</button></form>")
        }
        html.raw("<form method=\"post\" action=\"\(action)/mute\" class=\"actions\">")
        html.raw("<input name=\"hours\" type=\"number\" min=\"1\" max=\"8760\" size=\"5\" placeholder=\"hours\">")
        html.raw("<input name=\"occurrences\" type=\"number\" min=\"1\" size=\"5\" placeholder=\"occurrences\">")
        html.raw("<button type=\"submit\">Mute</button></form>")
        return html
    }

    /// Each tag's most frequent values over the issue's occurrences, with counts and percentages (a tag no
    /// occurrence had is left out).
    static func tagBreakdowns(_ breakdowns: [TagBreakdown]) -> HTML {
        var html = HTML()
        let shown = breakdowns.filter { $0.values.contains { $0.value != nil } }
        guard !shown.isEmpty else { return html }
        let names = [
            "release": "Release", "environment": "Environment", "os": "OS", "host": "Host", "user": "User",
            "thread": "Thread",
        ]
        html.raw("<h2>Tags</h2><div class=\"tags\">")
        for breakdown in shown {
            html.raw(
                "<section class=\"tag\" data-tag=\"\(breakdown.tag)\"><h3>\(names[breakdown.tag] ?? breakdown.tag)</h3>"
            )
            html.raw("<table class=\"breakdown\"><tbody>")
            var rows = breakdown.values.map { (label: $0.value, none: $0.value == nil, count: $0.count) }
            if breakdown.others > 0 {
                let more = breakdown.distinctValues - breakdown.values.count
                rows.append(("\(more) other value\(more == 1 ? "" : "s")", true, breakdown.others))
            }
            for row in rows {
                html.raw("<tr><td class=\"value\(row.none ? " muted" : "")\">")
                html.text(row.label ?? "(none)")
                html.raw("</td><td class=\"num\">\(row.count)</td><td class=\"num percent\">")
                html.text(breakdown.percentText(row.count))
                html.raw(
                    "</td><td><meter min=\"0\" max=\"\(breakdown.total)\" value=\"\(row.count)\"></meter></td></tr>")
            }
            html.raw("</tbody></table></section>")
        }
        html.raw("</div>")
        return html
    }

    static func transitionTable(_ transitions: [IssueTransition]) -> HTML {
        var html = HTML()
        guard !transitions.isEmpty else { return html }
        html.raw("<h2>State changes</h2><div class=\"scroll\"><table><thead><tr><th>Time</th><th>Change</th>")
        html.raw("<th>Why</th></tr></thead><tbody>")
        for transition in transitions {
            html.raw("<tr><td>")
            html.text(WebPage.time(milliseconds: transition.time * 1000))
            html.raw("</td><td>")
            html.text("\(transition.from.rawValue) → \(transition.to.rawValue)")
            html.raw("</td><td>")
            html.text(transition.note ?? "")
            html.raw("</td></tr>")
        }
        html.raw("</tbody></table></div>")
        return html
    }

    /// Links to the occurrences `ids` (newest first), each with its time, release and user: the newest ones, or
    /// (`after` an occurrence's event id) those after it; then the pager: *Newest* when this is not the first
    /// page, *Older* (the page after `older`) when more follow.
    func occurrenceLinks(_ ids: [Int64], issue: IssueSummary, after: Int64?, older: Int64?) throws -> HTML {
        var html = HTML(raw: "<h2 id=\"occurrences\">Occurrences</h2>")
        if after != nil {
            html.raw("<p class=\"muted\">Older occurrences (of \(issue.occurrences), newest first).</p>")
        }
        html.raw("<ul class=\"occurrences\">")
        for id in ids {
            guard let event = try storedEvent(id: id) else { continue }
            let facts = OccurrenceFacts(event)
            html.raw("<li><a href=\"/events/\(id)\">")
            html.text(WebPage.time(milliseconds: event.time))
            html.raw("</a> <span class=\"muted\">")
            html.text([facts.release, event.distinctId].compactMap { $0 }.joined(separator: " · "))
            html.raw("</span></li>")
        }
        html.raw("</ul>")
        if ids.isEmpty { html.raw("<p class=\"muted\">No older occurrences.</p>") }
        html.raw("<nav class=\"pager\">")
        if after != nil { html.raw("<a class=\"newest\" href=\"/issues/\(issue.id)#occurrences\">Newest</a>") }
        if let older {
            html.raw("<a class=\"older\" href=\"/issues/\(issue.id)?before=\(older)#occurrences\">Older</a>")
        }
        html.raw("</nav>")
        return html
    }

    /// `POST /issues/<id>/resolve|reopen|mute` from the page's forms; then back to the issue (303).
    func issueAction(_ request: HTTPRequest, id: Int64, action: Substring) -> HTTPResponse {
        guard configuration.webActions else {
            return WebPage.refusal(
                403, title: "Read-only",
                "This page is read-only: start cohorly serve with --web-actions to resolve, reopen and mute from it"
                    + " (or use cohorly issues resolve|reopen|mute).")
        }
        let form = WebForm.fields(request.body)
        let actions = IssueActions(store: store)
        let now = Int64(Date().timeIntervalSince1970)
        do {
            switch action {
            case "resolve": try actions.resolve(id: id, inRelease: Self.nonEmpty(form["in_release"]), now: now)
            case "reopen": try actions.reopen(id: id, now: now)
            case "mute":
                let hours = try Self.formNumber(form, "hours", in: 1...8760)
                let count = try Self.formNumber(form, "occurrences", in: 1...1_000_000_000)
                try actions.mute(
                    id: id, until: hours.map { now + Int64($0) * 3600 }, forOccurrences: count, now: now)
            default: return WebPage.refusal(404, title: "Not found", "no such action")
            }
        } catch IssueError.unknownIssue {
            return WebPage.refusal(404, title: "Not found", IssueError.unknownIssue(id).description)
        } catch let error as IssueError {
            return WebPage.refusal(400, title: "Not changed", error.description)
        } catch let bad as BadRequest {
            return WebPage.refusal(400, title: "Not changed", bad.message)
        } catch {
            return WebPage.refusal(500, title: "Storage error", "storage error: \(error)")
        }
        return HTTPResponse(
            status: 303,
            headers: WebPage.securityHeaders + [
                ("Location", "/issues/\(id)"), ("Content-Type", "text/plain; charset=utf-8"),
            ], body: Array("changed\n".utf8))
    }

    /// The form's field `name` as a number in `range`; nil when empty or absent.
    static func formNumber(_ form: [String: String], _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = nonEmpty(form[name]) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw BadRequest(message: "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }
}

extension IssueQueries {
    /// The issue event `eventId` belongs to (nil: none, e.g. not an `$exception`).
    func issueId(ofEvent eventId: Int64) throws -> Int64? {
        try store.reading { db in
            var found: Int64?
            try db.prepare(
                """
                SELECT issue_id FROM issue_occurrences WHERE event_id = ?1
                UNION ALL SELECT issue_id FROM issue_occurrences_new WHERE event_id = ?1
                """
            ).rows([.int(eventId)]) {
                found = $0.int(0)
                return false
            }
            return found
        }
    }
}
