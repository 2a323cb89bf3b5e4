import Cohorly
import CohorlyCollector
import Foundation

/// A loopback Cohorly API (`POST /track`) that counts every `$exception` it is sent by `$insert_id` — duplicates
/// too, which the collector would fold — and can be slow or hold its answers, so the tests of the launch protocol
/// see a record sent twice, or by two processes at once.
final class CountingDestination: @unchecked Sendable {
    /// How requests are answered.
    enum Mode {
        /// 200 after `delay` seconds (a slow destination: two processes sending one queue overlap in time).
        case answer(delay: Double)
        /// Held until ``release(status:)``.
        case hold
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var mode: Mode
    private var releaseStatus: Int?
    private var inFlight: [String: Int] = [:]
    private var receivedCounts: [String: Int] = [:]
    private var acceptedCounts: [String: Int] = [:]
    private var heldCount = 0
    private var overlapCount = 0
    private var server: PlainHTTPServer?
    let url: URL

    init(_ mode: Mode) throws {
        self.mode = mode
        let answering = Answering()
        let server = PlainHTTPServer(maxBodyBytes: 32 << 20) { request in answering.destination?.answer(request) }
        url = URL(string: "http://127.0.0.1:\(try server.start(port: 0))") ?? URL(fileURLWithPath: "/")
        self.server = server
        answering.destination = self
    }

    /// Who answers the server's requests (set once, before any request can arrive at the test's destination).
    private final class Answering: @unchecked Sendable {
        weak var destination: CountingDestination?
    }

    func stop() {
        release(status: 503)
        server?.stop()
    }

    /// Answers the requests held with `status` and every later request with 200 at once.
    func release(status: Int) {
        condition.withLock {
            releaseStatus = status
            mode = .answer(delay: 0)
            condition.broadcast()
        }
    }

    /// How many requests carried the crash `insertId`.
    func received(_ insertId: String) -> Int { condition.withLock { receivedCounts[insertId, default: 0] } }
    /// How many of them were answered 200 (the destination took it).
    func accepted(_ insertId: String) -> Int { condition.withLock { acceptedCounts[insertId, default: 0] } }
    /// How many requests are held now.
    var held: Int { condition.withLock { heldCount } }
    /// How many requests arrived with a crash another request still in flight carried (two senders at once).
    var overlaps: Int { condition.withLock { overlapCount } }
    /// Every `$insert_id` received.
    var insertIds: Set<String> { condition.withLock { Set(receivedCounts.keys) } }

    private func answer(_ request: HTTPRequest) -> HTTPResponse {
        guard request.path.hasPrefix("/track") else {
            return HTTPResponse(status: 200, body: Array(#"{"status":1}"#.utf8))
        }
        let events = CohorlyValue(bytes: request.body)?.arrayValue ?? []
        let ids = events.filter { $0["event"]?.stringValue == "$exception" }.compactMap {
            $0["properties"]?["$insert_id"]?.stringValue?.lowercased()
        }
        condition.lock()
        defer { condition.unlock() }
        for id in ids {
            if inFlight[id, default: 0] > 0 { overlapCount += 1 }
            inFlight[id, default: 0] += 1
            receivedCounts[id, default: 0] += 1
        }
        defer { for id in ids { inFlight[id, default: 1] -= 1 } }
        var status = 200
        switch mode {
        case .hold:
            heldCount += 1
            while case .hold = mode { condition.wait() }
            heldCount -= 1
            status = releaseStatus ?? 200
        case .answer(let delay):
            if delay > 0 { _ = condition.wait(until: Date(timeIntervalSinceNow: delay)) }
        }
        if status == 200 { for id in ids { acceptedCounts[id, default: 0] += 1 } }
        return HTTPResponse(status: status, body: Array(#"{"status":1,"inserted":\#(ids.count)}"#.utf8))
    }
}
