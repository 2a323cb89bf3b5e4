import CohorlyCollectorAPI
import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly issues show ID`: one issue, its counts per release and its latest occurrence symbolicated.
enum IssuesShowCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["issues", "show"], summary: "Show one issue: its counts, its states, its latest crash symbolicated.",
        positionals: IssueID.positional,
        about: """
            The issue's state, first and last seen (crash time, UTC) with their releases, occurrences and users, the
            occurrences per release, the state changes, then its latest occurrence symbolicated by the collector,
            printed as `cohorly crashes show` prints a crash. ID is the number `cohorly issues list` shows, or the
            issue's short id (MYAPP-12).
            """,
        options: [CollectorOptions.host] + CollectorOptions.secret("read") + [
            .flag("--full-names", "Full names in the stack, as in --json."),
            .flag("--simplified", "Simplified names in the stack: the default.", listed: false),
            .flag("--no-async", "The raw physical stacks, without the `[async]` callers."),
            .flag("--all-frames", "Every frame (runs of 3 or more frames of other code are otherwise folded)."),
            CollectorOptions.json,
        ],
        epilogue: "EXIT STATUS: 0 success, 1 no such issue or the collector could not be reached, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        guard let first = parsed.positionals.first, let id = IssueID.parse(first) else {
            return spec.usageError(IssueID.expected(parsed.positionals))
        }
        return CollectorRequest.read(parsed, command: spec.name, path: "/api/issues/\(id)") { text, request in
            guard let page = CohorlyValue(json: text), let issue = page["issue"] else {
                Console.error("cohorly: unexpected answer from \(request.host)")
                return .failure
            }
            print(summary(issue, page))
            guard let latest = page["latest"], latest != .null,
                let shown = try? JSONDecoder().decode(
                    CrashesShowCommand.ShownCrash.self, from: Data(latest.jsonString.utf8))
            else {
                print("\nLatest occurrence: not stored")
                return .success
            }
            let escaped = TerminalText.escaped
            var header = [
                "Insert id: \(escaped(shown.insertId ?? "-"))", "Time: \(Timestamp.iso8601(milliseconds: shown.time))",
            ]
            if let release = shown.release { header.append("Release: \(escaped(release))") }
            header.append("User: \(escaped(shown.distinctId))")
            let options = SymbolicatedCrash.TextOptions(
                names: parsed.flags.contains("--full-names") ? .full : .simplified,
                missingDebugFilesAdvice: CrashesShowCommand.advice,
                showsAsyncCallers: !parsed.flags.contains("--no-async"),
                foldsOtherCode: !parsed.flags.contains("--all-frames"))
            print("\nLatest occurrence:\n" + shown.crash.text(header: header, options: options))
            if let breadcrumbs = BreadcrumbLines(shown.breadcrumbs) { print("\n" + breadcrumbs.text) }
            return .success
        }
    }

    /// The lines above the latest occurrence.
    static func summary(_ issue: CohorlyValue, _ page: CohorlyValue) -> String {
        let escaped = TerminalText.escaped
        func release(_ key: String) -> String {
            issue[key]?.stringValue.map { " (release \(escaped($0)))" } ?? ""
        }
        var state = escaped(issue["state"]?.stringValue ?? "-")
        if let release = issue["resolved_in_release"]?.stringValue { state += " in release \(escaped(release))" }
        if let until = issue["muted_until"], until != .null { state += " until \(IssueText.time(until))" }
        if let count = issue["muted_for_occurrences"]?.intValue {
            state += " for \(count) more occurrence\(count == 1 ? "" : "s")"
        }
        let shortId = issue["short_id"]?.stringValue.map { " (\(escaped($0)))" } ?? ""
        var lines = [
            "Issue \(issue["id"]?.intValue ?? 0)\(shortId): \(escaped(IssueText.name(issue)))",
            "State: \(state)",
            "App: \(escaped(issue["app"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "-"))",
            "Level: \(escaped(issue["level"]?.stringValue ?? "-"))  Mechanism: "
                + escaped(issue["mechanism"]?.stringValue ?? "-"),
            "First seen: \(IssueText.time(issue["first_seen"]))" + release("first_release"),
            "Last seen: \(IssueText.time(issue["last_seen"]))" + release("last_release"),
            "Occurrences: \(issue["occurrences"]?.intValue ?? 0) from \(issue["users"]?.intValue ?? 0) user(s)",
        ]
        let releases = (page["per_release"]?.arrayValue ?? []).map {
            "\(escaped($0["release"]?.stringValue ?? "?")): \($0["count"]?.intValue ?? 0)"
        }
        if !releases.isEmpty { lines.append("Per release: " + releases.joined(separator: ", ")) }
        lines += tagLines(page["tags"]?.arrayValue ?? [])
        lines.append("Fingerprint: \(escaped(issue["fingerprint"]?.stringValue ?? "-"))")
        let transitions = page["transitions"]?.arrayValue ?? []
        if !transitions.isEmpty {
            lines.append("History:")
            for change in transitions {
                let note = change["note"]?.stringValue.map { " (\(escaped($0)))" } ?? ""
                lines.append(
                    "  \(IssueText.time(change["time"])) \(escaped(change["from"]?.stringValue ?? "?")) → "
                        + "\(escaped(change["to"]?.stringValue ?? "?"))" + note)
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension IssuesShowCommand {
    /// `Tags:` and a line per tag any occurrence had: its most frequent values with counts and percentages,
    /// `  os           Ubuntu 24.04 3 (75 %), Debian 12 1 (25 %)`.
    static func tagLines(_ tags: [CohorlyValue]) -> [String] {
        let escaped = TerminalText.escaped
        var lines: [String] = []
        for tag in tags {
            let values = tag["values"]?.arrayValue ?? []
            guard values.contains(where: { $0["value"]?.stringValue != nil }) else { continue }
            func share(_ count: Int, _ percent: CohorlyValue?) -> String {
                let number = percent.flatMap { value -> Double? in
                    if case .double(let double) = value { return double }
                    return value.intValue.map(Double.init)
                }
                let text = number.map { $0 == $0.rounded() ? String(Int($0)) : String($0) } ?? "?"
                return "\(count) (\(text == "0" && count > 0 ? "<0.1" : text) %)"
            }
            var parts = values.map { value in
                let name = value["value"]?.stringValue.map(escaped) ?? "(none)"
                return "\(name) " + share(value["count"]?.intValue ?? 0, value["percent"])
            }
            let others = tag["others"]?.intValue ?? 0
            if others > 0, let total = tag["total"]?.intValue, total > 0 {
                let more = (tag["distinct"]?.intValue ?? values.count) - values.count
                let percent = CohorlyValue.double((Double(others) * 1000 / Double(total)).rounded() / 10)
                parts.append("\(more) other value\(more == 1 ? "" : "s") " + share(others, percent))
            }
            lines.append(
                "  " + escaped(tag["tag"]?.stringValue ?? "?").padded(12) + " " + parts.joined(separator: ", "))
        }
        return lines.isEmpty ? [] : ["Tags (most frequent values over the occurrences):"] + lines
    }
}

/// An issue id on the command line: a positive decimal integer, or a short id (`MYAPP-12`); as the path
/// component of `/api/issues/<id>`.
enum IssueID {
    /// The `ID` positional of the issue commands: exactly one.
    static let positional = CommandPositionals(
        "ID", count: 1...1, missing: expected([]), tooMany: expected([]))

    static func parse(_ text: String) -> String? {
        if let id = Int64(text), id > 0 { return String(id) }
        return IssueShortId.normalized(text)
    }

    /// The usage error for `positionals` that are not one id.
    static func expected(_ positionals: [String]) -> String {
        guard positionals.count == 1 else { return "expected one issue ID (the number or short id issues list shows)" }
        return "invalid issue ID '\(positionals[0])' (expected the number or short id issues list shows, such as 3 or "
            + "MYAPP-12)"
    }
}
