import Cohorly
import Foundation

/// `cohorly events list`: prints the events a collector stored (a table, or the server's JSON with `--json`).
enum EventsCommand {
    static func run(_ arguments: [String]) -> Int32 {
        let scanner = OptionScanner(
            arguments, options: ["--host", "--event", "--distinct-id", "--limit", "--auth-token"],
            flags: ["--json"])
        guard scanner.positional == ["list"] else {
            Usage.fail("usage: cohorly events list [--host URL] [--json]")
        }
        let environment = ProcessInfo.processInfo.environment
        let host = scanner.value("--host") ?? environment["COHORLY_HOST"] ?? "http://127.0.0.1:4000"
        var components = URLComponents(
            string: host.hasSuffix("/") ? String(host.dropLast()) + "/api/events" : host + "/api/events")
        var query: [URLQueryItem] = []
        if let event = scanner.value("--event") {
            query.append(URLQueryItem(name: "event", value: event))
        }
        if let id = scanner.value("--distinct-id") {
            query.append(URLQueryItem(name: "distinct_id", value: id))
        }
        if let limit = scanner.value("--limit") {
            guard Int(limit) != nil else { Usage.fail("invalid --limit \(limit)") }
            query.append(URLQueryItem(name: "limit", value: limit))
        }
        if !query.isEmpty { components?.queryItems = query }
        guard let url = components?.url, url.scheme == "http" || url.scheme == "https" else {
            Usage.fail("invalid --host \(host)")
        }
        var headers: [(String, String)] = []
        if let admin = scanner.value("--auth-token") ?? environment["COHORLY_AUTH_TOKEN"] {
            headers.append(("Authorization", "Bearer \(admin)"))
        }
        let request = TransportRequest(
            url: url, method: "GET", headers: headers, body: [], timeout: 30, connectTimeout: 10)
        switch CurlTransport().send(request) {
        case .failure(let message):
            return Usage.failure("cannot reach \(host): \(message)")
        case .http(let status, _, let body):
            let text = String(decoding: body, as: UTF8.self)
            guard status == 200 else { return Usage.failure("\(host) answered \(status): \(text)") }
            if scanner.flags.contains("--json") {
                print(text)
                return 0
            }
            guard let document = CohorlyValue(json: text), let events = document["events"]?.arrayValue
            else {
                return Usage.failure("unexpected answer from \(host)")
            }
            printTable(events, total: document["total"]?.intValue)
            return 0
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
