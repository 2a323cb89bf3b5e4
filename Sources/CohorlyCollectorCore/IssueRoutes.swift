import CohorlyCollectorAPI
import Foundation

// The issue endpoints (ours; docs/issues.md), behind the same Host / Origin / secret checks as every `/api` route:
//
//   GET  /api/issues?state=&level=&release=&app=&q=&since=&sort=&limit=   {"issues":[issue…],"count":N}
//   GET  /api/issues/<id>          {"issue":…,"per_release":[{release,count}],"per_day":[14 counts],
//                                   "transitions":[…],"latest":<as GET /api/crashes/<insert_id>>,
//                                   "tags":[{tag,total,distinct,others,values:[{value,count,percent}]}]}
//   POST /api/issues/<id>/resolve  {"in_release":"1.2.0"} (or {})
//   POST /api/issues/<id>/reopen   {}
//   POST /api/issues/<id>/mute     {"until":<unix seconds>,"occurrences":N} (one or both)
//
// Times are unix seconds. An action answers the issue after it; 404 for an unknown id, 400 for bad input.
extension Router {
    /// The answer when `request` is an issue route, else nil.
    func issueRoute(_ request: HTTPRequest) throws -> HTTPResponse? {
        guard request.path == "/api/issues" || request.path.hasPrefix("/api/issues/") else { return nil }
        let queries = IssueQueries(store: store)
        if request.path == "/api/issues" {
            guard request.method == "GET" else { return .error(405, "use GET") }
            let issues = try queries.list(
                try Self.issueFilter(request), sort: try Self.issueSort(request),
                limit: try request.integer("limit", in: QueryLimits.limit, absent: 100))
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "application/json")],
                body: Array(IssueListJSON.text(issues).utf8))
        }
        let parts = request.path.dropFirst("/api/issues/".count).split(separator: "/", omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty, parts.count <= 2 else {
            return .error(404, "expected /api/issues/<id> or /api/issues/<id>/resolve|reopen|mute")
        }
        // The row id, or the short id (`MYAPP-12`).
        let id: Int64
        if let number = Int64(first), number > 0 {
            id = number
        } else if IssueShortId.normalized(String(first)) != nil {
            guard let found = try queries.issueId(shortId: String(first)) else {
                return .error(404, "no issue with short id \(first.prefix(40))")
            }
            id = found
        } else {
            return .error(404, "expected /api/issues/<id> (a number or a short id such as MYAPP-12)")
        }
        if parts.count == 1 {
            guard request.method == "GET" else { return .error(405, "use GET") }
            guard let answer = try issuePage(id, queries) else {
                return .error(404, IssueError.unknownIssue(id).description)
            }
            return .json(200, answer)
        }
        guard request.method == "POST" else { return .error(405, "use POST") }
        let body = request.body.isEmpty ? JSONValue.object([:]) : JSONValue(bytes: request.body)
        guard let body, body.objectValue != nil else { return .error(400, "expected a JSON object") }
        let actions = IssueActions(store: store)
        let now = Int64(Date().timeIntervalSince1970)
        do {
            switch parts[1] {
            case "resolve":
                let release = body["in_release"]
                guard release == nil || release == .null || release?.stringValue != nil else {
                    return .error(400, "in_release must be a string")
                }
                try actions.resolve(id: id, inRelease: release?.stringValue, now: now)
            case "reopen": try actions.reopen(id: id, now: now)
            case "mute":
                let until = body["until"]
                let count = body["occurrences"]
                guard until == nil || until == .null || until?.intValue != nil else {
                    return .error(400, "until must be unix seconds (an integer)")
                }
                guard count == nil || count == .null || count?.intValue != nil else {
                    return .error(400, "occurrences must be an integer")
                }
                try actions.mute(
                    id: id, until: until?.intValue.map(Int64.init), forOccurrences: count?.intValue, now: now)
            default: return .error(404, "unknown issue action '\(parts[1].prefix(40))' (resolve, reopen or mute)")
            }
        } catch let error as IssueError {
            if case .unknownIssue = error { return .error(404, error.description) }
            return .error(400, error.description)
        }
        guard let issue = try queries.issue(id: id) else { return .error(404, IssueError.unknownIssue(id).description) }
        return .json(200, ["issue": issue.json])
    }

    /// `GET /api/issues/<id>`'s answer (nil: no such issue).
    private func issuePage(_ id: Int64, _ queries: IssueQueries) throws -> JSONValue? {
        guard let issue = try queries.issue(id: id) else { return nil }
        var latest = JSONValue.null
        if let event = try store.events(matching: EventQuery(afterId: issue.latestEventId - 1, limit: 1)).first,
            event.id == issue.latestEventId
        {
            latest = crashQueries.show(event)
        }
        let releases = try queries.occurrencesPerRelease(id: id).map { entry -> JSONValue in
            ["release": .string(entry.release), "count": .int(entry.count)]
        }
        let days = try queries.occurrencesPerDay(id: id, days: 14, now: Int64(Date().timeIntervalSince1970))
        return [
            "issue": issue.json, "per_release": .array(releases), "per_day": .array(days.map { .int($0) }),
            "transitions": .array(try queries.transitions(id: id).map(\.json)), "latest": latest,
            "tags": .array(try queries.breakdowns(id: id).map(\.json)),
        ]
    }

    private var crashQueries: CrashQueries {
        CrashQueries(store: store, debugFiles: debugFiles, extraDirectories: configuration.extraDebugFileDirectories)
    }

    static func issueFilter(_ request: HTTPRequest) throws -> IssueFilter {
        var filter = IssueFilter(
            level: request.query["level"], release: request.query["release"], app: request.query["app"])
        if let query = request.query["q"] {
            do {
                filter.search = try IssueSearch.parse(query, now: Int64(Date().timeIntervalSince1970 * 1000))
            } catch {
                throw BadRequest(message: error.description)
            }
        }
        if let state = request.query["state"] {
            guard let value = IssueState(rawValue: state) else {
                throw BadRequest(
                    message: "invalid state=\(state.prefix(40)): expected open, resolved, regressed or muted")
            }
            filter.state = value
        }
        filter.since = try request.integer("since", in: 0...Int(Int64.max / 1000)).map(Int64.init)
        return filter
    }

    static func issueSort(_ request: HTTPRequest) throws -> IssueSort {
        guard let text = request.query["sort"] else { return .lastSeen }
        guard let sort = IssueSort(rawValue: text) else {
            throw BadRequest(message: "invalid sort=\(text.prefix(40)): expected last-seen, occurrences or users")
        }
        return sort
    }
}

extension IssueSummary {
    /// As the API sends it (snake case, times in unix seconds).
    var json: JSONValue {
        [
            "id": .int(Int(id)), "short_id": .string(shortId), "app": .string(app), "fingerprint": .string(fingerprint),
            "title": .string(title), "subtitle": .string(subtitle), "culprit": .string(culprit),
            "culprit_display": .string(displayCulprit), "level": .string(level),
            "mechanism": .string(mechanism),
            "state": .string(state.rawValue), "resolved_in_release": resolvedInRelease.map(JSONValue.string) ?? .null,
            "muted_until": mutedUntil.map { .int(Int($0)) } ?? .null,
            "muted_for_occurrences": mutedForOccurrences.map { .int($0) } ?? .null,
            "first_seen": .int(Int(firstSeen)), "last_seen": .int(Int(lastSeen)), "occurrences": .int(occurrences),
            "users": .int(users), "first_release": firstRelease.map(JSONValue.string) ?? .null,
            "last_release": lastRelease.map(JSONValue.string) ?? .null, "latest_event_id": .int(Int(latestEventId)),
        ]
    }
}

extension IssueTransition {
    /// As the API sends it.
    var json: JSONValue {
        [
            "from": .string(from.rawValue), "to": .string(to.rawValue), "time": .int(Int(time)),
            "release": release.map(JSONValue.string) ?? .null, "note": note.map(JSONValue.string) ?? .null,
        ]
    }
}
