import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly issues resolve|reopen|mute ID`: changes an issue's state through `POST /api/issues/<id>/<action>`.
enum IssuesAction {
    /// Parses the id and the options, sends the action, prints the issue's new state.
    static func run(
        _ arguments: [String], action: String, options: Set<String>,
        body: (ParsedArguments) throws(UsageError) -> [String: CohorlyValue]
    ) -> ExitStatus {
        let command = "issues \(action)"
        let parsed: ParsedArguments
        let fields: [String: CohorlyValue]
        let request: CollectorRequest
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json"], options: options.union(["--host", "--auth-token", "--auth-token-file"]))
            fields = try body(parsed)
            request = try CollectorRequest(parsed: parsed)
        } catch {
            return Console.usageError(error.reason, command: command)
        }
        guard parsed.positionals.count == 1, let id = IssueID.parse(parsed.positionals[0]) else {
            return Console.usageError(IssueID.expected(parsed.positionals), command: command)
        }
        let answer = request.send("POST", "/api/issues/\(id)/\(action)", body: CohorlyValue.object(fields).jsonString)
        return CollectorRequest.printed(answer, json: parsed.flags.contains("--json"), command: command) { text in
            let issue = CohorlyValue(json: text)?["issue"] ?? .null
            print(IssuesShowCommand.summary(issue, .null).split(separator: "\n").prefix(2).joined(separator: "\n"))
            return .success
        }
    }

    static let common = """
          --host URL        The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
          --auth-token-file F  The collector's secret, from a file (default COHORLY_AUTH_TOKEN).
          --json            Print the collector's JSON answer (the issue after the change).
          -h, --help        Show this help.

        EXIT STATUS: 0 success, 1 no such issue, a refused change, or the collector could not be reached,
        2 usage error.
        """
}

/// `cohorly issues resolve ID [--in-release R]`.
enum IssuesResolveCommand: Command {
    static let words = ["issues", "resolve"]
    static let summary = "Mark an issue fixed, now or in a release."
    static let help = """
        USAGE: cohorly issues resolve ID [--in-release R] [--host URL] [--auth-token-file F] [--json]

        Without --in-release, a later occurrence (by crash time) makes the issue regressed. With it, only an
        occurrence from a release after R does: releases compare as semantic versions when both are
        (1.10.0 after 1.9.0, 2.0.0-rc.1 before 2.0.0), else by when the collector first saw them.

        OPTIONS:
          --in-release R    The release that fixes it.

        """ + IssuesAction.common

    static func run(_ arguments: [String]) -> ExitStatus {
        IssuesAction.run(arguments, action: "resolve", options: ["--in-release"]) { parsed throws(UsageError) in
            guard let release = parsed.options["--in-release"]?.last else { return [:] }
            guard !release.isEmpty else { throw UsageError(reason: "--in-release needs a release name") }
            return ["in_release": .string(release)]
        }
    }
}

/// `cohorly issues reopen ID`.
enum IssuesReopenCommand: Command {
    static let words = ["issues", "reopen"]
    static let summary = "Make a resolved, regressed or muted issue open again."
    static let help = """
        USAGE: cohorly issues reopen ID [--host URL] [--auth-token-file F] [--json]

        OPTIONS:

        """ + IssuesAction.common

    static func run(_ arguments: [String]) -> ExitStatus {
        IssuesAction.run(arguments, action: "reopen", options: []) { _ throws(UsageError) in [:] }
    }
}

/// `cohorly issues mute ID --until DATE | --occurrences N`.
enum IssuesMuteCommand: Command {
    static let words = ["issues", "mute"]
    static let summary = "Silence an issue until a date or for N more occurrences."
    static let help = """
        USAGE: cohorly issues mute ID (--until DATE | --occurrences N) [--host URL] [--auth-token-file F] [--json]

        A muted issue stays muted whatever release it recurs in. The mute ends (the issue is open again) with the
        first occurrence that arrives on or after DATE, or with the Nth occurrence from now; given both, with
        whichever comes first.

        OPTIONS:
          --until DATE      A date (2026-12-31, midnight UTC) or a time (2026-12-31T18:00:00Z), in the future.
          --occurrences N   A number of occurrences, at least 1.

        """ + IssuesAction.common

    static func run(_ arguments: [String]) -> ExitStatus {
        IssuesAction.run(arguments, action: "mute", options: ["--until", "--occurrences"]) {
            parsed throws(UsageError) in
            var body: [String: CohorlyValue] = [:]
            if let until = parsed.options["--until"]?.last {
                body["until"] = .int(Int(try IssueDates.date(until, option: "--until")))
            }
            if let text = parsed.options["--occurrences"]?.last {
                guard let count = Int(text), count >= 1, count <= 1_000_000_000 else {
                    throw UsageError(reason: "invalid --occurrences '\(text)' (expected a number from 1)")
                }
                body["occurrences"] = .int(count)
            }
            guard !body.isEmpty else {
                throw UsageError(reason: "say when the mute ends: --until DATE or --occurrences N")
            }
            return body
        }
    }
}
