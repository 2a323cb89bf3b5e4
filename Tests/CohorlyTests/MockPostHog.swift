import Foundation

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog
import CohorlyCompression
import CohorlyHTTPServer

/// A mock PostHog capture V1 server over loopback (libmicrohttpd, the collector's `HTTPServer`): records every
/// request (gzip bodies inflated) and answers from a script, then with PostHog's success answer — `200` with an `ok`
/// result per event on capture V1, `200 {"status": 1}` on the legacy `/batch` (docs/posthog.md "Self-hosted PostHog
/// without capture V1"). Flags
/// requests (`POST /flags`) are kept apart (`flagsRequests`, answered from `thenFlags`, else `{"flags":{}}`), so
/// a client's flag evaluations never take a capture answer.
final class MockPostHog: @unchecked Sendable {
    /// One recorded request.
    struct Request {
        var path: String
        var headers: [String: String]
        var rawBody: [UInt8]
        var body: CohorlyValue?
        /// When it arrived (monotonic seconds).
        var receivedAt = ProcessInfo.processInfo.systemUptime

        func header(_ name: String) -> String? { headers[name.lowercased()] }
        var batch: [CohorlyValue] { body?["batch"]?.arrayValue ?? [] }
        var uuids: [String] { batch.compactMap { $0["uuid"]?.stringValue } }
        var events: [String] { batch.compactMap { $0["event"]?.stringValue } }
    }

    /// A scripted answer.
    enum Answer {
        /// PostHog's success answer: 200, `ok` for every event (`{"status": 1}` on `/batch`).
        case ok
        /// A status with an optional `Retry-After` and `{"error": tag}` body.
        case status(Int, retryAfter: String? = nil, error: String? = nil)
        /// 200 with these results for the batch's events in order (missing ones: absent from the map).
        case results([String], retryAfter: String? = nil)
        /// 200 with this raw body.
        case body(String)
        /// Closes the connection without an answer.
        case dropConnection
    }

    private let lock = NSLock()
    private var script: [Answer] = []
    private var recorded: [Request] = []
    private var flagsScript: [String] = []
    private var flagsRecorded: [Request] = []
    private var server: PlainHTTPServer?
    private(set) var url = URL(fileURLWithPath: "/")

    init() throws {
        let box = HandlerBox()
        let server = PlainHTTPServer(maxBodyBytes: 16 << 20) { request in box.mock?.answer(request) }
        let port = try server.start(port: 0)
        self.server = server
        url = URL(string: "http://127.0.0.1:\(port)") ?? url
        box.mock = self
    }

    /// Lets the server's handler reach the mock without keeping it alive.
    private final class HandlerBox: @unchecked Sendable {
        weak var mock: MockPostHog?
    }

    deinit { stop() }

    func stop() {
        let running = lock.withLock {
            let current = server
            server = nil
            return current
        }
        running?.stop()
    }

    /// Queues answers for the next requests, in order.
    func then(_ answers: Answer...) { lock.withLock { script += answers } }

    var requests: [Request] { lock.withLock { recorded } }

    /// Queues bodies (status 200) for the next flags requests, in order.
    func thenFlags(_ bodies: String...) { lock.withLock { flagsScript += bodies } }

    /// The flags requests received.
    var flagsRequests: [Request] { lock.withLock { flagsRecorded } }

    private func answer(_ http: HTTPRequest) -> HTTPResponse? {
        var raw = http.body
        if http.header("Content-Encoding") == "gzip" {
            var inflated: [UInt8] = []
            if let stream = try? ZlibStream(.inflate) {
                try? raw.withUnsafeBytes { bytes in try stream.process(bytes) { inflated += $0 } }
                try? stream.finish { inflated += $0 }
            }
            raw = inflated
        }
        let request = Request(path: http.path, headers: http.headers, rawBody: raw, body: CohorlyValue(bytes: raw))
        if http.path.hasSuffix("/flags") {
            let body = lock.withLock {
                flagsRecorded.append(request)
                return flagsScript.isEmpty ? #"{"flags":{}}"# : flagsScript.removeFirst()
            }
            return HTTPResponse(status: 200, body: Array(body.utf8))
        }
        let next: Answer = lock.withLock {
            recorded.append(request)
            return script.isEmpty ? .ok : script.removeFirst()
        }
        func json(_ status: Int, _ value: CohorlyValue, _ headers: [(String, String)] = []) -> HTTPResponse {
            HTTPResponse(
                status: status, headers: [("Content-Type", "application/json")] + headers,
                body: Array(value.jsonString.utf8))
        }
        switch next {
        case .ok where request.path.hasSuffix("/batch"):
            return json(200, ["status": 1])
        case .ok:
            return json(
                200,
                ["results": .object(Dictionary(uniqueKeysWithValues: request.uuids.map { ($0, ["result": "ok"]) }))])
        case .status(let status, let retryAfter, let error):
            return json(
                status, ["error": .string(error ?? "mock_error"), "error_description": "scripted"],
                retryAfter.map { [("Retry-After", $0)] } ?? [])
        case .results(let results, let retryAfter):
            var map: [String: CohorlyValue] = [:]
            for (uuid, result) in zip(request.uuids, results) {
                map[uuid] =
                    result == "drop" ? ["result": "drop", "details": "invalid_event"] : ["result": .string(result)]
            }
            return json(200, ["results": .object(map)], retryAfter.map { [("Retry-After", $0)] } ?? [])
        case .body(let text):
            return HTTPResponse(status: 200, body: Array(text.utf8))
        case .dropConnection:
            return nil
        }
    }
}

/// A client of `mock` sending PostHog capture V1, with millisecond retry delays.
func makePostHogClient(
    _ mock: MockPostHog, directory: URL = temporaryDirectory(), recorder: Recorder? = nil,
    _ configure: (inout PostHogConfiguration) -> Void = { _ in },
    options adjust: (inout CohorlyOptions) -> Void = { _ in }
) throws -> Cohorly {
    var posthog = try PostHogConfiguration(host: mock.url.absoluteString, apiKey: "phc_test")
    posthog.retryBaseDelay = 0.001
    posthog.maxRetryDelay = 0.02
    configure(&posthog)
    var options = testOptions(directory, recorder: recorder)
    adjust(&options)
    return Cohorly(posthog: posthog, options: options)
}
