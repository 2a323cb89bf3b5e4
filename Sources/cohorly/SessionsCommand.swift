import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly sessions list`: the Sentry session updates (release health) a collector stored, oldest first.
enum SessionsListCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["sessions", "list"], summary: "List the Sentry session updates (release health) a collector stored.",
        about: """
            One line per session update received on the Sentry envelope route (`/api/<project>/envelope/`), oldest
            first: when it started, its status (ok, exited, crashed, abnormal, errored), handled errors, duration,
            release, session id and distinct id.
            """,
        options: [CollectorOptions.host, CollectorOptions.limit("At most N updates, the oldest.", default: 1000)]
            + CollectorOptions.secret("read") + [CollectorOptions.json],
        epilogue: "EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        return CollectorRequest.table(
            parsed, command: spec.name, path: "/api/sessions", key: "sessions", empty: "no sessions stored",
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
