import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly events list`: prints the events a collector stored (a table, or the server's JSON with `--json`).
enum EventsListCommand: Command {
    static let words = ["events", "list"]
    static let summary = "List the events a collector stored."
    static let help = """
        USAGE: cohorly events list [--host URL] [--event NAME] [--distinct-id ID] [--limit N] [--auth-token-file F] [--json]

        OPTIONS:
          --host URL          The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
          --event NAME        Only events with this name.
          --distinct-id ID    Only events of this user.
          --limit N           At most N events, the newest (listed newest first; default 1000).
          --auth-token-file F The collector's read secret, from a file (default COHORLY_AUTH_TOKEN).
          --json              Print the collector's JSON answer.
          -h, --help          Show this help.

        EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json"],
                options: ["--host", "--event", "--distinct-id", "--limit", "--auth-token", "--auth-token-file"])
        } catch {
            return Console.usageError(error.reason, command: "events list")
        }
        guard parsed.positionals.isEmpty else {
            return Console.usageError("unexpected argument '\(parsed.positionals[0])'", command: "events list")
        }
        func option(_ name: String) -> String? { parsed.options[name]?.last }
        var query = [URLQueryItem(name: "order", value: "newest")]
        if let event = option("--event") { query.append(URLQueryItem(name: "event", value: event)) }
        if let id = option("--distinct-id") { query.append(URLQueryItem(name: "distinct_id", value: id)) }
        return CollectorRequest.read(parsed, command: "events list", path: "/api/events", query: query) {
            text, request in
            guard let document = CohorlyValue(json: text), let events = document["events"]?.arrayValue else {
                Console.error("cohorly: unexpected answer from \(request.host)")
                return .failure
            }
            printTable(events, total: document["total"]?.intValue)
            return .success
        }
    }

    private static func printTable(_ events: [CohorlyValue], total: Int?) {
        guard !events.isEmpty else {
            print("no events match")
            return
        }
        print(
            ["TIME (UTC)".padded(24), "EVENT".padded(24), "DISTINCT ID".padded(38), "INSERT ID"].joined(separator: " "))
        for event in events {
            let columns = [
                Timestamp.iso8601(milliseconds: event["time"]?.intValue.map(Int64.init)).padded(24),
                TerminalText.escaped(event["event"]?.stringValue ?? "").padded(24),
                TerminalText.escaped(event["distinct_id"]?.stringValue ?? "").padded(38),
                TerminalText.escaped(event["insert_id"]?.stringValue ?? "-"),
            ]
            print(columns.joined(separator: " "))
        }
        if let total, total > events.count {
            print("(showing \(events.count) of \(total) events; use --limit or --json)")
        }
    }
}
