import Cohorly
import Foundation

/// `cohorly events list`: prints the events a collector stored (a table, or the server's JSON with `--json`).
enum EventsListCommand: Command {
    static let words = ["events", "list"]
    static let summary = "List the events a collector stored."
    static let help = """
        USAGE: cohorly events list [--host URL] [--event NAME] [--distinct-id ID] [--limit N] [--auth-token S] [--json]

        OPTIONS:
          --host URL          The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
          --event NAME        Only events with this name.
          --distinct-id ID    Only events of this user.
          --limit N           At most N events (newest first).
          --auth-token S      The collector's read secret (default COHORLY_AUTH_TOKEN).
          --json              Print the collector's JSON answer.
          -h, --help          Show this help.

        EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json"], options: ["--host", "--event", "--distinct-id", "--limit", "--auth-token"])
        } catch {
            return Console.usageError(error.reason, command: "events list")
        }
        guard parsed.positionals.isEmpty else {
            return Console.usageError("unexpected argument '\(parsed.positionals[0])'", command: "events list")
        }
        func option(_ name: String) -> String? { parsed.options[name]?.last }
        let environment = ProcessInfo.processInfo.environment
        let host = option("--host") ?? environment["COHORLY_HOST"] ?? "http://127.0.0.1:4000"
        var components = URLComponents(
            string: host.hasSuffix("/") ? String(host.dropLast()) + "/api/events" : host + "/api/events")
        var query: [URLQueryItem] = []
        if let event = option("--event") {
            query.append(URLQueryItem(name: "event", value: event))
        }
        if let id = option("--distinct-id") {
            query.append(URLQueryItem(name: "distinct_id", value: id))
        }
        if let limit = option("--limit") {
            guard Int(limit) != nil else { return Console.usageError("invalid --limit \(limit)", command: "events list") }
            query.append(URLQueryItem(name: "limit", value: limit))
        }
        if !query.isEmpty { components?.queryItems = query }
        guard let url = components?.url, url.scheme == "http" || url.scheme == "https" else {
            return Console.usageError("invalid --host \(host)", command: "events list")
        }
        var headers: [(String, String)] = []
        if let admin = option("--auth-token") ?? environment["COHORLY_AUTH_TOKEN"] {
            headers.append(("Authorization", "Bearer \(admin)"))
        }
        let request = TransportRequest(
            url: url, method: "GET", headers: headers, body: [], timeout: 30, connectTimeout: 10)
        switch CurlTransport().send(request) {
        case .failure(let message):
            Console.error("cohorly: cannot reach \(host): \(message)")
            return .failure
        case .http(let status, _, let body):
            let text = String(decoding: body, as: UTF8.self)
            guard status == 200 else {
                Console.error("cohorly: \(host) answered \(status): \(text)")
                return .failure
            }
            if parsed.flags.contains("--json") {
                print(text)
                return .success
            }
            guard let document = CohorlyValue(json: text), let events = document["events"]?.arrayValue
            else {
                Console.error("cohorly: unexpected answer from \(host)")
                return .failure
            }
            printTable(events, total: document["total"]?.intValue)
            return .success
        }
    }

    private static func printTable(_ events: [CohorlyValue], total: Int?) {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        print(
            ["TIME (UTC)".padding(24), "EVENT".padding(24), "DISTINCT ID".padding(38), "INSERT ID"]
                .joined(separator: " "))
        for event in events {
            let millis = event["time"]?.intValue ?? 0
            let time = formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
            let columns = [
                time.padding(24), (event["event"]?.stringValue ?? "").padding(24),
                (event["distinct_id"]?.stringValue ?? "").padding(38),
                event["insert_id"]?.stringValue ?? "-",
            ]
            print(columns.joined(separator: " "))
        }
        if let total, total > events.count {
            print("(showing \(events.count) of \(total) events; use --limit or --json)")
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
