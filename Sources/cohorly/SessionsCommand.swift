import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly sessions list`: the Sentry session updates (release health) a collector stored, oldest first.
enum SessionsListCommand: Command {
    static let words = ["sessions", "list"]
    static let summary = "List the Sentry session updates (release health) a collector stored."
    static let help = """
        USAGE: cohorly sessions list [--host URL] [--limit N] [--auth-token-file F] [--json]

        One line per session update received on the Sentry envelope route (`/api/<project>/envelope/`), oldest
        first: when it started, its status (ok, exited, crashed, abnormal, errored), handled errors, duration,
        release, session id and distinct id.

        OPTIONS:
          --host URL          The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
          --limit N           At most N updates, the oldest (default 1000).
          --auth-token-file F The collector's read secret, from a file (default COHORLY_AUTH_TOKEN).
          --json              Print the collector's JSON answer.
          -h, --help          Show this help.

        EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json"], options: ["--host", "--limit", "--auth-token", "--auth-token-file"])
        } catch {
            return Console.usageError(error.reason, command: "sessions list")
        }
        guard parsed.positionals.isEmpty else {
            return Console.usageError("unexpected argument '\(parsed.positionals[0])'", command: "sessions list")
        }
        return CollectorRequest.table(
            parsed, command: "sessions list", path: "/api/sessions", key: "sessions", empty: "no sessions stored",
            header: [
                ("STARTED", 26), ("STATUS", 9), ("ERRORS", 7), ("DURATION", 9), ("RELEASE", 20), ("SESSION ID", 37),
                ("DISTINCT ID", 0),
            ]
        ) { session in
            let text = { (value: CohorlyValue?) in TerminalText.escaped(value?.stringValue ?? "-") }
            let duration = session["duration"]?.doubleValue.map { String(format: "%.1fs", $0) } ?? "-"
            let columns = [
                text(session["started"]).padded(26), text(session["status"] ?? "ok").padded(9),
                String(session["errors"]?.intValue ?? 0).padded(7), duration.padded(9),
                text(session["attrs"]?["release"]).padded(20), text(session["sid"]).padded(37),
                text(session["did"]),
            ]
            return columns.joined(separator: " ")
        }
    }
}
