import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly events list`: prints the events a collector stored (a table, or the server's JSON with `--json`).
enum EventsListCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["events", "list"], summary: "List the events a collector stored.",
        options: [
            CollectorOptions.host,
            CommandOption("--event", .word("NAME"), "Only events with this name."),
            CommandOption("--distinct-id", .word("ID"), "Only events of this user."),
            CollectorOptions.limit("At most N events, the newest (listed newest first).", default: 1000),
        ] + CollectorOptions.secret("read") + [CollectorOptions.json],
        epilogue: "EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        func option(_ name: String) -> String? { parsed.options[name]?.last }
        var query = [URLQueryItem(name: "order", value: "newest")]
        if let event = option("--event") { query.append(URLQueryItem(name: "event", value: event)) }
        if let id = option("--distinct-id") { query.append(URLQueryItem(name: "distinct_id", value: id)) }
        return CollectorRequest.read(parsed, command: spec.name, path: "/api/events", query: query) {
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
