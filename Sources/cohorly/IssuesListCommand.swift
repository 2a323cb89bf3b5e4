import CohorlyCollectorAPI
import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly issues list`: the collector's issues (its `$exception` events grouped), last seen first.
enum IssuesListCommand: Command {
    static let words = ["issues", "list"]
    static let summary = "List the issues a collector grouped its crashes into."
    static let help = """
        USAGE: cohorly issues list [--app NAME] [--query Q] [--state S] [--level L] [--release R] [--since WHEN]
                                   [--sort last-seen|occurrences|users] [--limit N] [--host URL]
                                   [--auth-token-file F] [--json]

        Every crash, handled error, hang and abnormal exit the collector holds belongs to one issue: the same
        exception type with the same in-app frames (or the same fingerprint the app sent). EVENTS counts its
        occurrences, USERS their distinct ids; RELEASES the first and the last release it was seen in. Each issue
        belongs to an app ($app_name, or a Sentry DSN's project) and has a SHORT ID numbered in it (MYAPP-12),
        which `issues show` takes as well as the ID. `cohorly crashes list` still lists the occurrences one by one.

        OPTIONS:
          --app NAME        Only issues of app NAME.
          --query Q         Only issues the search Q finds: words in the title, message or culprit, and
                            is:open|resolved|muted|regressed, level:, release:, app:, user:, function:,
                            firstSeen:-24h, lastSeen:-7d (docs/issues.md, "Search").
          --state S         Only issues in state S: open, resolved, regressed or muted.
          --level L         Only issues of level L (fatal: what ended the app; error: what it survived).
          --release R       Only issues seen in release R: 1.2.0, MyApp@1.2.0, or a prefix (MyApp, 1.2).
          --since WHEN      Only issues seen since WHEN: a date (2026-12-01), a time (2026-12-01T10:00:00Z), or
                            a duration back from now (90m, 24h, 7d).
          --sort ORDER      last-seen (default), occurrences or users; the most first.
          --limit N         At most N issues (default 100).
          --host URL        The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
          --auth-token-file F  The collector's read secret, from a file (default COHORLY_AUTH_TOKEN).
          --json            Print the collector's JSON answer.
          -h, --help        Show this help.

        EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let command = "issues list"
        let parsed: ParsedArguments
        var query: [URLQueryItem] = []
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json"],
                options: [
                    "--host", "--limit", "--state", "--level", "--release", "--since", "--sort", "--auth-token",
                    "--auth-token-file", "--app", "--query",
                ])
            guard parsed.positionals.isEmpty else {
                return Console.usageError("unexpected argument '\(parsed.positionals[0])'", command: command)
            }
            if let state = try parsed.choice("--state", among: ["open", "resolved", "regressed", "muted"]) {
                query.append(URLQueryItem(name: "state", value: state))
            }
            if let sort = try parsed.choice("--sort", among: ["last-seen", "occurrences", "users"]) {
                query.append(URLQueryItem(name: "sort", value: sort))
            }
            for (option, name) in [("--level", "level"), ("--release", "release"), ("--app", "app")] {
                if let value = parsed.options[option]?.last { query.append(URLQueryItem(name: name, value: value)) }
            }
            if let search = parsed.options["--query"]?.last { query.append(try searchItem(search)) }
            if let since = parsed.options["--since"]?.last {
                let seconds = try IssueDates.since(since, now: Date())
                query.append(URLQueryItem(name: "since", value: String(seconds)))
            }
        } catch {
            return Console.usageError(error.reason, command: command)
        }
        return CollectorRequest.table(
            parsed, command: command, path: "/api/issues", query: query, key: "issues", empty: "no issues match",
            header: [
                ("ID", 6), ("SHORT ID", 14), ("STATE", 9), ("LEVEL", 5), ("EVENTS", 7), ("USERS", 6),
                ("LAST SEEN (UTC)", 20),
                ("RELEASES", 24), ("ISSUE", 0),
            ], row: IssueText.row)
    }
}

extension IssuesListCommand {
    /// `--query`'s `q`, once the collector's parser read it: a query that does not parse is a usage error naming its
    /// term, before anything is sent.
    static func searchItem(_ search: String) throws(UsageError) -> URLQueryItem {
        do {
            _ = try IssueSearch.parse(search, now: Int64(Date().timeIntervalSince1970 * 1000))
        } catch {
            throw UsageError(reason: "--query: \(error.description)")
        }
        return URLQueryItem(name: "q", value: search)
    }
}

/// How issues print.
enum IssueText {
    /// One line of `issues list`.
    static func row(_ issue: CohorlyValue) -> String {
        let escaped = TerminalText.escaped
        let releases = [issue["first_release"]?.stringValue, issue["last_release"]?.stringValue].compactMap { $0 }
        let span =
            releases.isEmpty ? "-" : (releases[0] == releases.last ? releases[0] : releases.joined(separator: " – "))
        return [
            String(issue["id"]?.intValue ?? 0).padded(6), escaped(issue["short_id"]?.stringValue ?? "-").padded(14),
            escaped(issue["state"]?.stringValue ?? "-").padded(9),
            escaped(issue["level"]?.stringValue ?? "-").padded(5),
            String(issue["occurrences"]?.intValue ?? 0).padded(7),
            String(issue["users"]?.intValue ?? 0).padded(6), time(issue["last_seen"]).padded(20),
            escaped(span).padded(24), escaped(name(issue)),
        ].joined(separator: " ")
    }

    /// `title: subtitle (in culprit)`.
    static func name(_ issue: CohorlyValue) -> String {
        let title = issue["title"]?.stringValue ?? ""
        let raw = issue["culprit"]?.stringValue ?? ""
        // The culprit as the stack prints it (`culprit_display`; an earlier collector sends only `culprit`).
        let culprit = issue["culprit_display"]?.stringValue ?? raw
        let subtitle = issue["subtitle"]?.stringValue.map { $0 == raw ? culprit : $0 } ?? ""
        let name = subtitle.isEmpty ? title : "\(title): \(subtitle)"
        return culprit.isEmpty || culprit == subtitle ? name : "\(name) (in \(culprit))"
    }

    /// Unix seconds as `2026-12-01T10:00:00Z`.
    static func time(_ value: CohorlyValue?) -> String {
        guard let seconds = value?.intValue else { return "-" }
        let text = Timestamp.iso8601(milliseconds: Int64(seconds).multipliedReportingOverflow(by: 1000).partialValue)
        return text.replacingOccurrences(of: ".000Z", with: "Z")
    }
}

/// The dates the issue commands take.
enum IssueDates {
    /// `--since`: a date, a date-time, or a duration back from `now` (`90m`, `24h`, `7d`); unix seconds.
    static func since(_ text: String, now: Date) throws(UsageError) -> Int64 {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        if let unit = text.last.flatMap({ units[$0] }), let count = Double(text.dropLast()), count >= 0,
            count.isFinite, count * unit < 1e11
        {
            return Int64(max(0, now.timeIntervalSince1970 - count * unit))
        }
        return try date(text, option: "--since")
    }

    /// A date (`2026-12-31`, midnight UTC) or an ISO 8601 date-time (`2026-12-31T18:00:00Z`, an offset allowed);
    /// unix seconds.
    static func date(_ text: String, option: String) throws(UsageError) -> Int64 {
        if let milliseconds = IssueSearch.date(text) { return milliseconds / 1000 }
        throw UsageError(
            reason: "invalid \(option) '\(text)' (expected a date such as 2026-12-31, a time such as "
                + "2026-12-31T18:00:00Z" + (option == "--since" ? ", or a duration such as 24h or 7d)" : ")"))
    }
}
