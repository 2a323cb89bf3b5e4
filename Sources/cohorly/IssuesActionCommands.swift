import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly issues resolve|reopen|mute ID`: changes an issue's state through `POST /api/issues/<id>/<action>`.
enum IssuesAction {
    /// The declaration of `issues <action>`: the issue's ID, the action's `options`, then the collector's.
    static func spec(_ action: String, summary: String, about: String? = nil, options: [CommandOption]) -> CommandSpec {
        CommandSpec(
            words: ["issues", action], summary: summary, positionals: IssueID.positional, about: about,
            options: options + [CollectorOptions.host] + CollectorOptions.secret("read") + [
                .flag("--json", "Print the collector's JSON answer (the issue after the change).")
            ],
            epilogue: """
                EXIT STATUS: 0 success, 1 no such issue, a refused change, or the collector could not be reached,
                2 usage error.
                """)
    }

    /// Parses the id and the options (`spec`), sends the action, prints the issue's new state.
    static func run(
        _ arguments: [String], spec: CommandSpec, body: (ParsedArguments) throws(UsageError) -> [String: CohorlyValue]
    ) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        let fields: [String: CohorlyValue]
        let request: CollectorRequest
        do {
            fields = try body(parsed)
            request = try CollectorRequest(parsed: parsed)
        } catch {
            return spec.usageError(error.reason)
        }
        guard let first = parsed.positionals.first, let id = IssueID.parse(first) else {
            return spec.usageError(IssueID.expected(parsed.positionals))
        }
        let action = spec.words[1]
        let answer = request.send("POST", "/api/issues/\(id)/\(action)", body: CohorlyValue.object(fields).jsonString)
        return CollectorRequest.printed(answer, json: parsed.flags.contains("--json"), command: spec.name) { text in
            let issue = CohorlyValue(json: text)?["issue"] ?? .null
            print(IssuesShowCommand.summary(issue, .null).split(separator: "\n").prefix(2).joined(separator: "\n"))
            return .success
        }
    }
}

/// `cohorly issues resolve ID [--in-release R]`.
enum IssuesResolveCommand: DeclaredCommand {
    static let spec = IssuesAction.spec(
        "resolve", summary: "Mark an issue fixed, now or in a release.",
        about: """
            Without --in-release, a later occurrence (by crash time) makes the issue regressed. With it, only an
            occurrence from a release after R does: releases compare as semantic versions when both are
            (1.10.0 after 1.9.0, 2.0.0-rc.1 before 2.0.0), else by when the collector first saw them.
            """,
        options: [CommandOption("--in-release", .word("R"), "The release that fixes it.")])

    static func run(_ arguments: [String]) -> ExitStatus {
        IssuesAction.run(arguments, spec: spec) { parsed throws(UsageError) in
            guard let release = parsed.options["--in-release"]?.last else { return [:] }
            guard !release.isEmpty else { throw UsageError(reason: "--in-release needs a release name") }
            return ["in_release": .string(release)]
        }
    }
}

/// `cohorly issues reopen ID`.
enum IssuesReopenCommand: DeclaredCommand {
    static let spec = IssuesAction.spec(
        "reopen", summary: "Make a resolved, regressed or muted issue open again.", options: [])

    static func run(_ arguments: [String]) -> ExitStatus {
        IssuesAction.run(arguments, spec: spec) { _ throws(UsageError) in [:] }
    }
}

/// `cohorly issues mute ID --until DATE | --occurrences N`.
enum IssuesMuteCommand: DeclaredCommand {
    static let spec = IssuesAction.spec(
        "mute", summary: "Silence an issue until a date or for N more occurrences.",
        about: """
            A muted issue stays muted whatever release it recurs in. The mute ends (the issue is open again) with the
            first occurrence that arrives on or after DATE, or with the Nth occurrence from now; given both, with
            whichever comes first. One of --until and --occurrences is needed.
            """,
        options: [
            CommandOption(
                "--until", .word("DATE"),
                "A date (2026-12-31, midnight UTC) or a time (2026-12-31T18:00:00Z), in the future."),
            CommandOption("--occurrences", .word("N"), "A number of occurrences, at least 1."),
        ])

    static func run(_ arguments: [String]) -> ExitStatus {
        IssuesAction.run(arguments, spec: spec) { parsed throws(UsageError) in
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
