import Cohorly
import CohorlyCompression
import CohorlyHTTPServer
import Foundation

/// What `/state` reports: counted from what the client's transport sent and heard, and from its debug log.
final class AdapterStats: @unchecked Sendable {
    private let lock = NSLock()
    private var capturedCount = 0
    private var sentCount = 0
    private var retries = 0
    private var lastError: String?
    private var requests: [CohorlyValue] = []

    var sent: Int { lock.withLock { sentCount } }

    func captured() { lock.withLock { capturedCount += 1 } }

    func reset() {
        lock.withLock {
            (capturedCount, sentCount, retries, lastError) = (0, 0, 0, nil)
            legacyBatches = []
            requests = []
        }
    }

    func fail(_ message: String) { lock.withLock { lastError = message } }

    /// Debug lines about drops and failures become `last_error`.
    func log(_ line: String) {
        guard line.contains("dropped") || line.contains("kept") || line.contains("HTTP 4") || line.contains("HTTP 5")
        else { return }
        lock.withLock { lastError = line }
    }

    /// The uuids of the legacy batches sent so far (a batch seen again is a retry: `/batch` has no attempt header).
    private var legacyBatches: Set<[String]> = []

    func record(_ request: TransportRequest, _ response: TransportResponse) {
        let legacy = request.url.path.hasSuffix("/batch") ? Self.legacyUUIDs(request) : nil
        var attempt = request.headers.first { $0.0 == "PostHog-Attempt" }.flatMap { Int($0.1) } ?? 1
        if let legacy, lock.withLock({ !legacyBatches.insert(legacy).inserted }) { attempt = 2 }
        var entry: [String: CohorlyValue] = ["attempt": .int(attempt), "url": .string(request.url.absoluteString)]
        var delivered = 0
        switch response {
        case .http(let status, _, let body):
            entry["status"] = .int(status)
            if (200..<300).contains(status), let results = CohorlyValue(bytes: body)?["results"]?.objectValue {
                delivered = results.values.filter { $0["result"]?.stringValue != "retry" }.count
            } else if (200..<300).contains(status), let legacy {
                delivered = legacy.count  // the legacy answer is for the whole batch
            }
        case .failure(let message):
            entry["error"] = .string(message)
        }
        lock.withLock {
            if attempt > 1 { retries += 1 }
            sentCount += delivered
            requests.append(.object(entry))
            if requests.count > 1000 { requests.removeFirst() }
        }
    }

    /// The event uuids of a legacy `/batch` request (its body inflated when gzip-compressed).
    static func legacyUUIDs(_ request: TransportRequest) -> [String] {
        var body = request.body
        if request.headers.contains(where: { $0.0 == "Content-Encoding" && $0.1 == "gzip" }) {
            var inflated: [UInt8] = []
            if let stream = try? ZlibStream(.inflate) {
                try? body.withUnsafeBytes { bytes in try stream.process(bytes) { inflated += $0 } }
                try? stream.finish { inflated += $0 }
            }
            body = inflated
        }
        return CohorlyValue(bytes: body)?["batch"]?.arrayValue?.compactMap { $0["uuid"]?.stringValue } ?? []
    }

    func state(pending: Int) -> CohorlyValue {
        lock.withLock {
            [
                "pending_events": .int(pending), "total_events_captured": .int(capturedCount),
                "total_events_sent": .int(sentCount), "total_retries": .int(retries),
                "last_error": lastError.map(CohorlyValue.string) ?? .null, "requests_made": .array(requests),
            ]
        }
    }
}

/// The client's own libcurl transport, observed: every exchange is counted for `/state`, nothing is changed.
struct ObservingTransport: Transport {
    let stats: AdapterStats
    let inner = CurlTransport()

    func send(_ request: TransportRequest) -> TransportResponse {
        let response = inner.send(request)
        stats.record(request, response)
        return response
    }
}
