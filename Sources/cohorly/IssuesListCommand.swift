import CohorlyCollectorAPI
import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly issues list`: the collector's issues (its `$exception` events grouped), last seen first.
enum IssuesListCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["issues", "list"], summary: "List the issues a collector grouped its crashes into.",
        about: """
            Every crash, handled error, hang and abnormal exit the collector holds belongs to one issue: the same
            exception type with the same in-app frames (or the same fingerprint the app sent). EVENTS counts its
            occurrences, USERS their distinct ids; RELEASES the first and the last release it was seen in. Each issue
            belongs to an app ($app_name, or a Sentry DSN's project) and has a SHORT ID numbered in it (MYAPP-12),
            which `issues show` takes as well as the ID. `cohorly crashes list` still lists the occurrences one by one.
            """,
        options: [
            CommandOption("--app", .word("NAME"), "Only issues of app NAME."),
            CommandOption(
                "--query", .word("Q"),
                "Only issues the search Q finds: words in the title, message or culprit, and"
                    + " is:open|resolved|muted|regressed, level:, release:, app:, user:, function:, firstSeen:-24h,"
                    + " lastSeen:-7d (docs/issues.md, \"Search\")."),
            CommandOption(
                "--state", .choice("S", ["open", "resolved", "regressed", "muted"]),
                "Only issues in state S: open, resolved, regressed or muted."),
            CommandOption(
                "--level", .word("L"), "Only issues of level L (fatal: what ended the app; error: what it survived)."),
            CommandOption(
                "--release", .word("R"), "Only issues seen in release R: 1.2.0, MyApp@1.2.0, or a prefix (MyApp, 1.2)."),
            CommandOption(
                "--since", .word("WHEN"),
                "Only issues seen since WHEN: a date (2026-12-01), a time (2026-12-01T10:00:00Z), or a duration back"
                    + " from now (90m, 24h, 7d)."),
            CommandOption(
                "--sort", .choice("ORDER", ["last-seen", "occurrences", "users"]),
                "last-seen, occurrences or users; the most first.", default: "last-seen"),
            CollectorOptions.limit("At most N issues.", default: 100), CollectorOptions.host,
        ] + CollectorOptions.secret("read") + [CollectorOptions.json],
        epilogue: "EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        var query: [URLQueryItem] = []
        do {
            // `--state` and `--sort` are choices: the table checked their values.
            for (option, name) in [
                ("--state", "state"), ("--sort", "sort"), ("--level", "level"), ("--release", "release"),
                ("--app", "app"),
            ] {
                if let value = parsed.options[option]?.last { query.append(URLQueryItem(name: name, value: value)) }
            }
            if let search = parsed.options["--query"]?.last { query.append(try searchItem(search)) }
            if let since = parsed.options["--since"]?.last {
                let seconds = try IssueDates.since(since, now: Date())
                query.append(URLQueryItem(name: "since", value: String(seconds)))
            }
        } catch {
            return spec.usageError(error.reason)
        }
        return CollectorRequest.table(
            parsed, command: spec.name, path: "/api/issues", query: query, key: "issues", empty: "no issues match",
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
