import CohorlyCollectorAPI
import CohorlyCollectorClient
import CohorlyCommandLine
import CohorlyHTTPClient
import CohorlyJSON
import CohorlySymbols
import Foundation

/// A GET of the collector's read API (`/api/…`), shared by `events list` and `crashes list|show`.
struct CollectorRequest {
    /// The collector's base URL: `--host`, else `COHORLY_HOST`, else `http://127.0.0.1:4000`.
    let host: String
    /// Where `host` came from (`--host` or `COHORLY_HOST`), for messages.
    let hostSource: String
    /// The read secret (`SecretOption`: `--auth-token-file`, `--auth-token`, else `COHORLY_AUTH_TOKEN`).
    let authToken: String?

    init(parsed: ParsedArguments) throws(UsageError) {
        let environment = ProcessInfo.processInfo.environment
        (host, hostSource) = CollectorAddress.resolve(option: parsed.options["--host"]?.last, environment: environment)
        switch SecretOption.resolve(parsed) {
        case .success(let secret): authToken = secret
        case .failure(let error): throw error
        }
    }

    /// What went wrong: a usage error (bad host) or a failed request (message already printed).
    enum Failure: Error {
        case usage(String)
        case failed
    }

    /// Fetches `path` with `query`; returns the body of a 200 answer.
    func get(_ path: String, query: [URLQueryItem] = []) -> Result<String, Failure> {
        send("GET", path, query: query)
    }

    /// Sends `method` to `path` (with `body` as JSON when given); returns the body of a 2xx answer.
    func send(_ method: String, _ path: String, query: [URLQueryItem] = [], body: String? = nil)
        -> Result<String, Failure>
    {
        if let problem = CollectorAddress.problem(host, source: hostSource) { return .failure(.usage(problem)) }
        let base = host.hasSuffix("/") ? String(host.dropLast()) : host
        var components = URLComponents(string: base + path)
        if !query.isEmpty { components?.queryItems = query }
        guard let url = components?.url else {
            return .failure(
                .usage("invalid \(hostSource) '\(host)' (use a URL such as \(CollectorAddress.defaultHost))"))
        }
        var headers: [(String, String)] = []
        if let authToken {
            // The secret itself is never sent: the server proves it holds it, then each request carries an HMAC.
            let authentication = CollectorAuthentication(url: URL(string: base) ?? url, secret: authToken)
            switch authentication.verify() {
            case nil: break
            case .unreachable(let message)?:
                Console.error("cohorly: " + CollectorAddress.unreachable(host, message))
                return .failure(.failed)
            case .unproven(let detail)?:
                Console.error("cohorly: " + CollectorAuthentication.unprovenMessage(host, detail))
                return .failure(.failed)
            case .status(let status, let body)?:
                return .failure(refused(status, body))
            }
            headers += authentication.headers(method: method)
        }
        if body != nil { headers.append(("Content-Type", "application/json")) }
        let request = TransportRequest(
            url: url, method: method, headers: headers, body: Array((body ?? "").utf8), timeout: 30,
            connectTimeout: 10)
        switch CurlTransport().send(request) {
        case .failure(let message):
            Console.error("cohorly: " + CollectorAddress.unreachable(host, message))
            return .failure(.failed)
        case .http(let status, _, let body):
            let text = String(decoding: body, as: UTF8.self)
            guard (200..<300).contains(status) else { return .failure(refused(status, body)) }
            return .success(text)
        }
    }

    /// Prints a refusal: the collector's errors are `{"status":0,"error":"…"}`, the reason alone is printed.
    private func refused(_ status: Int, _ body: [UInt8]) -> Failure {
        let text = String(decoding: body, as: UTF8.self)
        let reason = CohorlyValue(json: text)?["error"]?.stringValue ?? text
        Console.error("cohorly: \(host) answered \(status): \(TerminalText.fromServer(reason))")
        if let hint = CollectorAddress.hint(status: status, sentSecret: authToken != nil) {
            Console.error(hint)
        }
        return .failed
    }

    /// A read command's common part: builds the query (`--limit` checked), fetches `path`, prints the collector's
    /// JSON as is with `--json`, else hands the body to `render`. Usage errors name `command`.
    static func read(
        _ parsed: ParsedArguments, command: String, path: String, query: [URLQueryItem] = [],
        render: (_ body: String, _ request: CollectorRequest) -> ExitStatus
    ) -> ExitStatus {
        var query = query
        if let limit = parsed.options["--limit"]?.last {
            guard let value = Int(limit), QueryLimits.limit.contains(value) else {
                let range = QueryLimits.limit
                return Console.usageError(
                    "invalid --limit \(limit) (expected \(range.lowerBound) to \(range.upperBound))", command: command)
            }
            query.append(URLQueryItem(name: "limit", value: limit))
        }
        let request: CollectorRequest
        do {
            request = try CollectorRequest(parsed: parsed)
        } catch {
            return Console.usageError(error.reason, command: command)
        }
        return printed(request.get(path, query: query), json: parsed.flags.contains("--json"), command: command) {
            render($0, request)
        }
    }

    /// What a command prints of an answer: the collector's JSON as it is with `json`, else what `render` makes of
    /// the body; a usage problem (a bad host) is reported against `command`, a failure (already printed) exits 1.
    static func printed(
        _ answer: Result<String, Failure>, json: Bool = false, command: String, render: (_ body: String) -> ExitStatus
    ) -> ExitStatus {
        switch answer {
        case .failure(.usage(let reason)): return Console.usageError(reason, command: command)
        case .failure(.failed): return .failure
        case .success(let body):
            if json {
                print(body)
                return .success
            }
            return render(body)
        }
    }

    /// A list command's common part, over `read`: the answer's array under `key` (an answer without one is an
    /// unexpected answer, exit 1), `empty` printed when it holds nothing (not a bare header), else `header` (columns
    /// padded to their widths, the last one as is) and one line per item from `row`.
    static func table(
        _ parsed: ParsedArguments, command: String, path: String, query: [URLQueryItem] = [], key: String,
        empty: String, header: [(title: String, width: Int)], row: (CohorlyValue) -> String
    ) -> ExitStatus {
        read(parsed, command: command, path: path, query: query) { text, request in
            guard let items = CohorlyValue(json: text)?[key]?.arrayValue else {
                Console.error("cohorly: unexpected answer from \(request.host)")
                return .failure
            }
            guard !items.isEmpty else {
                print(empty)
                return .success
            }
            print(
                header.enumerated().map { index, column in
                    index == header.count - 1 ? column.title : column.title.padded(column.width)
                }.joined(separator: " "))
            for item in items { print(row(item)) }
            return .success
        }
    }
}
