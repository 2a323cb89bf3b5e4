import CohorlyCrashModel
import CohorlySymbols
import Foundation

/// The occurrence pages: `GET /events` (the latest `$exception` events, newest crash first, 50 a page) and
/// `GET /events/<id>` (one event symbolicated by `CrashQueries`, as `cohorly crashes show` prints it: the
/// crashed thread's stack with inlined and async frames, breadcrumbs, device and release, the other threads
/// folded).
extension Router {
    /// Occurrences a list page shows.
    static let occurrencesPerPage = 50

    func occurrenceList(_ request: HTTPRequest) throws -> HTTPResponse {
        let after = try request.integer("after", in: QueryLimits.rowId).map(Int64.init)
        var query = EventQuery(event: "$exception", afterId: after, limit: Self.occurrencesPerPage, newestFirst: true)
        query.byTime = true
        var body = HTML(raw: "<div class=\"scroll\"><table><thead><tr><th>Occurrence</th><th>Level</th>")
        body.raw("<th class=\"wide\">Release</th><th class=\"wide\">User</th><th>Time</th></tr></thead><tbody>")
        var count = 0
        var last: Int64?
        try store.forEachEvent(matching: query) { event in
            let facts = OccurrenceFacts(event)
            body.titleCell(href: "/events/\(event.id)", title: facts.title, subtitle: facts.value)
            body.raw("</td><td>")
            body.append(Self.levelBadge(facts.level))
            body.raw("</td><td class=\"wide\">")
            body.text(facts.release ?? "")
            body.raw("</td><td class=\"wide\">")
            body.text(event.distinctId)
            body.raw("</td><td>")
            body.text(WebPage.time(milliseconds: event.time))
            body.raw("</td></tr>")
            count += 1
            last = event.id
            return true
        }
        body.raw("</tbody></table></div>")
        if count == 0 { body.raw("<p class=\"muted\">No crashes, errors or hangs stored yet.</p>") }
        if count == Self.occurrencesPerPage, let last { body.raw("<p><a href=\"/events?after=\(last)\">Older</a></p>") }
        return WebPage.response(200, WebPage.document(title: "Occurrences", body))
    }

    /// The page of the `$exception` event `event`.
    func occurrencePage(_ event: StoredEvent) throws -> HTTPResponse {
        let facts = OccurrenceFacts(event)
        let crash = crashes.symbolicate(event)
        var body = HTML(raw: "<p class=\"sub\">")
        body.text(crash.reason)
        body.raw("</p>")
        let issue = try IssueQueries(store: store).issueId(ofEvent: event.id)
        if let issue {
            body.raw("<p>An occurrence of <a href=\"/issues/\(issue)\">issue \(issue)</a>.</p>")
        }
        body.append(try occurrenceNavigation(event, issue: issue))
        body.append(Self.factList(facts, event: event))
        body.append(Self.stacks(crash))
        body.append(Self.breadcrumbs(facts.properties[CapturedException.breadcrumbsProperty]?.arrayValue ?? []))
        return WebPage.response(200, WebPage.document(title: facts.title, body))
    }

    /// The `$exception` event whose row id is `id`, nil when there is none.
    func storedEvent(id: Int64) throws -> StoredEvent? {
        guard id > 0,
            let event = try store.events(matching: EventQuery(event: "$exception", afterId: id - 1, limit: 1)).first,
            event.id == id
        else { return nil }
        return event
    }

    static func levelBadge(_ level: String?) -> HTML {
        var html = HTML()
        guard let level else { return html }
        html.raw("<span class=\"badge level-\(HTML.urlComponent(level))\">")
        html.text(level)
        html.raw("</span>")
        return html
    }

    /// The event's facts as a `<dl>`: what it was, when, which release, which device.
    static func factList(_ facts: OccurrenceFacts, event: StoredEvent) -> HTML {
        let p = facts.properties
        let rows: [(String, String?)] = [
            ("Level", facts.level), ("Mechanism", facts.mechanism),
            ("Crashed at", WebPage.time(milliseconds: event.time)),
            ("Received", WebPage.time(milliseconds: event.receivedAt)),
            ("Release", facts.release), ("Dist", p["dist"]?.stringValue), ("User", event.distinctId),
            ("Thread", p[CapturedException.threadNameProperty]?.stringValue), ("Insert id", event.insertId),
            ("App", p["$app_name"]?.stringValue),
            (
                "OS",
                [p["$os_distribution"] ?? p["$os"], p["$os_version"]].compactMap { $0?.stringValue }
                    .joined(separator: " ")
            ),
            ("Kernel", p["$kernel_version"]?.stringValue), ("Architecture", p["$arch"]?.stringValue),
            ("Host", p["$hostname"]?.stringValue),
            ("SDK", [p["$lib"], p["$lib_version"]].compactMap { $0?.stringValue }.joined(separator: " ")),
        ]
        var html = HTML(raw: "<h2>Context</h2>")
        html.facts(rows)
        return html
    }

    /// The crashed thread's stack, then the other threads each folded in a `<details>`.
    static func stacks(_ crash: SymbolicatedCrash) -> HTML {
        var html = HTML()
        if crash.mechanism == "abnormal_exit" {
            html.raw("<h2>Stack</h2><p class=\"muted\">No stack: the process was killed (or lost power); nothing ")
            html.raw("could record it.</p>")
            return html
        }
        let crashed = crash.threads.first { $0.crashed }
        if let crashed {
            html.raw("<h2>Stack</h2><p class=\"muted\">")
            html.text(threadTitle(crashed, capture: crash.isCapture))
            html.raw("</p>")
            html.append(WebStack.frames(crashed, executable: crash.exception.executable))
        }
        let others = crash.threads.filter { !$0.crashed }
        if !others.isEmpty { html.raw("<h2>Other threads (\(others.count))</h2>") }
        for thread in others {
            html.raw("<details><summary>")
            html.text(threadTitle(thread, capture: crash.isCapture))
            html.raw("</summary>")
            html.append(WebStack.frames(thread, executable: crash.exception.executable))
            html.raw("</details>")
        }
        let missing = crash.unsymbolicatedModules.map(\.path) + (crash.modulesWithoutDebugInfo ?? []).map(\.path)
        if !missing.isEmpty {
            html.raw("<p class=\"muted\">Without debug files (upload them: <code>cohorly debug-files upload</code>): ")
            html.text(missing.map { $0.split(separator: "/").last.map(String.init) ?? $0 }.joined(separator: ", "))
            html.raw("</p>")
        }
        return html
    }

    /// `Thread 12 “name” (crashed)`; `(captured)` for a hang or a handled error (`capture`), as `crashes show`.
    static func threadTitle(_ thread: CapturedException.Thread, capture: Bool) -> String {
        var title = "Thread \(thread.tid.map(String.init) ?? "?")"
        if let name = thread.name, !name.isEmpty { title += " \u{201C}\(name)\u{201D}" }
        return thread.crashed ? title + (capture ? " (captured)" : " (crashed)") : title
    }

    /// A breadcrumb's `data` as compact JSON, without the recorder's task marks (`$task`, `$crashing_task`), as
    /// `cohorly crashes show` prints it (`{"sku":"sku-9"}`); nil when there is none.
    static func breadcrumbData(_ crumb: JSONValue) -> String? {
        guard case .object(var data)? = crumb["data"] else { return nil }
        data["$task"] = nil
        data["$crashing_task"] = nil
        return data.isEmpty ? nil : JSONValue.object(data).jsonString
    }

    /// The breadcrumbs in the event's order (the crashing task's first, each marked, then the others; each part
    /// oldest first), as a table (nothing when there are none).
    static func breadcrumbs(_ crumbs: [JSONValue]) -> HTML {
        var html = HTML()
        guard !crumbs.isEmpty else { return html }
        func crashing(_ crumb: JSONValue) -> Bool {
            crumb["crashing_task"] == .bool(true) || crumb["data"]?["$crashing_task"] == .bool(true)
        }
        // Marked when some are the crashing task's and some not (all of one task: nothing to tell apart).
        let crashingCount = crumbs.filter(crashing).count
        let marked = crashingCount > 0 && crashingCount < crumbs.count
        html.raw("<h2>Breadcrumbs (\(crumbs.count))</h2>")
        if marked { html.raw("<p class=\"muted\">The crashing task&#8217;s breadcrumbs first, marked.</p>") }
        html.raw("<div class=\"scroll\"><table class=\"breadcrumbs\"><thead><tr><th>Time</th>")
        html.raw("<th>Category</th><th>Message</th><th>Data</th></tr></thead><tbody>")
        for crumb in crumbs {
            html.raw(marked && crashing(crumb) ? "<tr class=\"crashing-task\"><td>&#9654; " : "<tr><td>")
            html.text(crumb["timestamp"]?.stringValue ?? "")
            html.raw("</td><td>")
            html.text(crumb["category"]?.stringValue ?? "")
            html.raw("</td><td class=\"title\">")
            html.text(crumb["message"]?.stringValue ?? "")
            html.raw("</td><td class=\"data\"><code>")
            html.text(breadcrumbData(crumb) ?? "")
            html.raw("</code></td></tr>")
        }
        html.raw("</tbody></table></div>")
        return html
    }
}

/// What the pages show of one `$exception` event, read once from its properties.
struct OccurrenceFacts {
    let properties: JSONValue
    /// The exception's type (`Fatal error`, `EXC_BAD_ACCESS / SIGSEGV`, …), else `$exception` itself.
    let title: String
    /// The exception's value (the message).
    let value: String
    let level: String?
    let mechanism: String?
    let release: String?

    init(_ event: StoredEvent) {
        properties = JSONValue(json: event.propertiesJSON) ?? .object([:])
        let exception = event.crash?.firstListedException
        title = exception?.type?.stringValue ?? properties["$exception_type"]?.stringValue ?? event.event
        value = exception?.value?.stringValue ?? properties["$exception_message"]?.stringValue ?? ""
        level = properties[CapturedException.levelProperty]?.stringValue
        mechanism = exception?.mechanismType?.stringValue
        release = properties["release"]?.stringValue
    }
}
