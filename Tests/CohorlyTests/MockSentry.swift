import CohorlyCompression
import CohorlyHTTPServer
import Foundation
import TestWaiting

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// A mock Sentry envelope endpoint over loopback, written from Sentry's published protocol (docs/sentry.md):
/// `POST {path}/api/{project}/envelope/` with `X-Sentry-Auth` (else 403), gzip bodies inflated, envelopes parsed by
/// their framing (header line; per item a header line with `type` and optional `length`, then the payload), events
/// deduplicated by `event_id` as Sentry does. Answers come from a script, then `200 {"id": …}`.
final class MockSentry: @unchecked Sendable {
    /// One parsed envelope.
    struct Envelope {
        var path: String
        var headers: [String: String]
        var header: CohorlyValue
        var items: [(header: CohorlyValue, payload: CohorlyValue?)]
        /// Set when the framing was wrong.
        var framingError: String?
        /// How many requests were being answered when this one arrived (itself included).
        var inFlight = 1

        func header(_ name: String) -> String? { headers[name.lowercased()] }
        var events: [CohorlyValue] { items.filter { $0.header["type"] == "event" }.compactMap(\.payload) }
        var sessions: [CohorlyValue] { items.filter { $0.header["type"] == "session" }.compactMap(\.payload) }
    }

    /// A scripted answer.
    enum Answer {
        case ok(headers: [(String, String)] = [])
        case status(Int, headers: [(String, String)] = [], body: String = "")
        case dropConnection
    }

    let projectId: String
    let publicKey = "mockpublickey"
    private let lock = NSLock()
    private var script: [Answer] = []
    private var recorded: [Envelope] = []
    private var stored: [String: CohorlyValue] = [:]
    private var server: PlainHTTPServer?
    private(set) var port = 0
    private let arrivals = NSCondition()
    // Under `arrivals`.
    private var answering = 0
    private var arrived = 0
    private var gate: (after: Int, together: Int)?
    private var held: (number: Int, released: Bool)?

    init(projectId: String = "42") throws {
        self.projectId = projectId
        let box = Box()
        let server = PlainHTTPServer(maxBodyBytes: 32 << 20) { request in box.mock?.answer(request) }
        port = Int(try server.start(port: 0))
        self.server = server
        box.mock = self
    }

    private final class Box: @unchecked Sendable {
        weak var mock: MockSentry?
    }

    deinit { stop() }

    func stop() {
        let running = lock.withLock {
            defer { server = nil }
            return server
        }
        running?.stop()
    }

    /// The DSN of this mock, with an optional path prefix (`/sentry`).
    func dsn(prefix: String = "") -> String { "http://\(publicKey)@127.0.0.1:\(port)\(prefix)/\(projectId)" }

    func then(_ answers: Answer...) { lock.withLock { script += answers } }

    /// The `together` requests after the first `after` are each held until all of them are in at once (at most
    /// 10 s each): a client that sends one at a time makes the first of them wait 10 s, and `inFlight` shows it.
    func holdTogether(after: Int, together: Int) { arrivals.withLock { gate = (after, together) } }

    /// Request `number` (1 for the first) is held, unanswered, until ``release()`` (at most 10 s).
    func hold(request number: Int) { arrivals.withLock { held = (number, false) } }

    /// Lets the held request be answered.
    func release() {
        arrivals.withLock {
            held?.released = true
            arrivals.broadcast()
        }
    }

    /// How many requests have come in (answered or not).
    var arrivedCount: Int { arrivals.withLock { arrived } }

    /// Counts the request in while `body` answers it; `body` gets how many are in (itself included) once it may
    /// go on.
    private func counted(_ body: (Int) -> HTTPResponse?) -> HTTPResponse? {
        arrivals.lock()
        answering += 1
        arrived += 1
        if let gate, arrived > gate.after, arrived <= gate.after + gate.together {
            let deadline = Date().addingTimeInterval(10)
            arrivals.broadcast()
            while arrived < gate.after + gate.together, arrivals.wait(until: deadline) {}
        }
        if held?.number == arrived {
            let deadline = Date().addingTimeInterval(10)
            while held?.released == false, arrivals.wait(until: deadline) {}
        }
        let inFlight = answering
        arrivals.unlock()
        defer { arrivals.withLock { answering -= 1 } }
        return body(inFlight)
    }

    /// Every envelope received, in order.
    var envelopes: [Envelope] { lock.withLock { recorded } }
    /// The events kept, one per `event_id`.
    var storedEvents: [String: CohorlyValue] { lock.withLock { stored } }
    var events: [CohorlyValue] { envelopes.flatMap(\.events) }
    var sessions: [CohorlyValue] { envelopes.flatMap(\.sessions) }

    /// Parses an envelope (docs/sentry.md "What maps to what").
    static func parse(_ bytes: [UInt8]) -> (CohorlyValue, [(CohorlyValue, CohorlyValue?)], String?) {
        var offset = 0
        func line() -> [UInt8]? {
            guard offset < bytes.count else { return nil }
            let end = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            defer { offset = end + 1 }
            return Array(bytes[offset..<end])
        }
        guard let first = line(), let header = CohorlyValue(bytes: first), header.objectValue != nil else {
            return (.null, [], "no envelope header line")
        }
        var items: [(CohorlyValue, CohorlyValue?)] = []
        while let itemLine = line() {
            if itemLine.isEmpty && offset >= bytes.count { break }
            guard let itemHeader = CohorlyValue(bytes: itemLine), itemHeader["type"]?.stringValue != nil else {
                return (header, items, "item header without a type")
            }
            let payload: [UInt8]
            if let length = itemHeader["length"]?.intValue {
                guard offset + length <= bytes.count else { return (header, items, "item shorter than its length") }
                payload = Array(bytes[offset..<offset + length])
                offset += length
                if offset < bytes.count {
                    guard bytes[offset] == UInt8(ascii: "\n") else { return (header, items, "no newline after item") }
                    offset += 1
                }
            } else {
                payload = line() ?? []
            }
            items.append((itemHeader, CohorlyValue(bytes: payload)))
        }
        return (header, items, nil)
    }

    private func answer(_ http: HTTPRequest) -> HTTPResponse? { counted { answer(http, inFlight: $0) } }

    private func answer(_ http: HTTPRequest, inFlight: Int) -> HTTPResponse? {
        var raw = http.body
        if http.header("Content-Encoding") == "gzip" {
            var inflated: [UInt8] = []
            if let stream = try? ZlibStream(.inflate) {
                try? raw.withUnsafeBytes { bytes in try stream.process(bytes) { inflated += $0 } }
                try? stream.finish { inflated += $0 }
            }
            raw = inflated
        }
        guard http.path.hasSuffix("/api/\(projectId)/envelope/") else { return HTTPResponse(status: 404, body: []) }
        guard let auth = http.header("X-Sentry-Auth"), auth.hasPrefix("Sentry "),
            auth.contains("sentry_key=\(publicKey)"), auth.contains("sentry_version=7")
        else { return HTTPResponse(status: 403, body: Array(#"{"detail":"missing authorization"}"#.utf8)) }
        let (header, items, framingError) = Self.parse(raw)
        let envelope = Envelope(
            path: http.path, headers: http.headers, header: header, items: items.map { ($0.0, $0.1) },
            framingError: framingError, inFlight: inFlight)
        let next: Answer = lock.withLock {
            recorded.append(envelope)
            return script.isEmpty ? .ok() : script.removeFirst()
        }
        switch next {
        case .ok(let headers):
            let id = header["event_id"]?.stringValue ?? ""
            lock.withLock {
                for event in envelope.events { stored[event["event_id"]?.stringValue ?? id] = event }
            }
            return HTTPResponse(status: 200, headers: headers, body: Array("{\"id\":\"\(id)\"}".utf8))
        case .status(let status, let headers, let body):
            return HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
        case .dropConnection:
            return nil
        }
    }
}

/// A client of `mock` sending to Sentry, with millisecond retry delays.
func makeSentryClient(
    _ mock: MockSentry, directory: URL = temporaryDirectory(), prefix: String = "", recorder: Recorder? = nil,
    _ configure: (inout SentryConfiguration) -> Void = { _ in },
    options adjust: (inout CohorlyOptions) -> Void = { _ in }
) throws -> Cohorly {
    var sentry = try SentryConfiguration(dsn: mock.dsn(prefix: prefix))
    sentry.release = "app@1.0"
    configure(&sentry)
    var options = testOptions(directory, recorder: recorder)
    adjust(&options)
    return Cohorly(sentry: sentry, options: options)
}

/// Sentry's own event normalizer on `events`: the errors it reports (none when it accepts them all).
func relayErrors(_ events: [CohorlyValue]) async throws -> [String] {
    try await sentryNormalizerErrors(eventsJSON: CohorlyValue.array(events).jsonString)
}
