/// `GET /api/issues`'s answer written straight into text: the same bytes as the tree of ``IssueSummary/json``
/// would give (compact, keys sorted), without building a dictionary per issue and sorting its keys (a list of
/// 1,000 issues spent most of its time there).
enum IssueListJSON {
    /// `{"count":N,"issues":[…]}`.
    static func text(_ issues: [IssueSummary]) -> String {
        var out = "{\"count\":\(issues.count),\"issues\":["
        out.reserveCapacity(issues.count * 600)
        for (index, issue) in issues.enumerated() {
            if index > 0 { out += "," }
            write(issue, into: &out)
        }
        out += "]}"
        return out
    }

    /// One issue's object, its members in sorted order (as ``IssueSummary/json``'s `jsonString`).
    static func write(_ issue: IssueSummary, into out: inout String) {
        out += "{\"app\":"
        JSONValue.writeString(issue.app, into: &out)
        out += ",\"culprit\":"
        JSONValue.writeString(issue.culprit, into: &out)
        out += ",\"culprit_display\":"
        JSONValue.writeString(issue.displayCulprit, into: &out)
        out += ",\"fingerprint\":"
        JSONValue.writeString(issue.fingerprint, into: &out)
        out += ",\"first_release\":"
        optional(issue.firstRelease, into: &out)
        out += ",\"first_seen\":\(issue.firstSeen),\"id\":\(issue.id),\"last_release\":"
        optional(issue.lastRelease, into: &out)
        out += ",\"last_seen\":\(issue.lastSeen),\"latest_event_id\":\(issue.latestEventId),\"level\":"
        JSONValue.writeString(issue.level, into: &out)
        out += ",\"mechanism\":"
        JSONValue.writeString(issue.mechanism, into: &out)
        out += ",\"muted_for_occurrences\":" + (issue.mutedForOccurrences.map(String.init) ?? "null")
        out += ",\"muted_until\":" + (issue.mutedUntil.map { String($0) } ?? "null")
        out += ",\"occurrences\":\(issue.occurrences),\"resolved_in_release\":"
        optional(issue.resolvedInRelease, into: &out)
        out += ",\"short_id\":"
        JSONValue.writeString(issue.shortId, into: &out)
        out += ",\"state\":"
        JSONValue.writeString(issue.state.rawValue, into: &out)
        out += ",\"subtitle\":"
        JSONValue.writeString(issue.subtitle, into: &out)
        out += ",\"title\":"
        JSONValue.writeString(issue.title, into: &out)
        out += ",\"users\":\(issue.users)}"
    }

    private static func optional(_ text: String?, into out: inout String) {
        if let text { JSONValue.writeString(text, into: &out) } else { out += "null" }
    }
}
