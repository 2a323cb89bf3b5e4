import CohorlyClient
import CohorlyCompression
import Foundation

/// One Sentry envelope (docs/sentry.md "What maps to what"): a header line of compact JSON (`event_id` when an
/// event is inside, `sent_at` once, `dsn`, `sdk`), then per item a header line (`type`, `length` in bytes) and its
/// payload, each followed by `\n`.
struct SentryEnvelope: Sendable {
    /// One item: its type (`event`, `session`) and payload (JSON text as UTF-8).
    struct Item: Sendable {
        var type: String
        var payload: [UInt8]
    }

    var eventId: String?
    var items: [Item]

    /// The envelope's bytes, `sent_at` = `sentAtMs`.
    func bytes(_ endpoint: SentryEndpoint, sentAtMs: Int64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(items.reduce(endpoint.headerTail.count + 96) { $0 + $1.payload.count + 40 })
        out += "{".utf8
        if let eventId { out += "\"event_id\":\"\(eventId)\",".utf8 }
        out += "\"sent_at\":\"\(RFC3339.format(milliseconds: sentAtMs))\"".utf8
        out += endpoint.headerTail
        for item in items {
            out += "{\"type\":\"\(item.type)\",\"length\":\(item.payload.count)}\n".utf8
            out += item.payload
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// The request that posts it.
    func request(_ endpoint: SentryEndpoint, options: CohorlyOptions) -> TransportRequest {
        var body = bytes(endpoint, sentAtMs: Int64(Date().timeIntervalSince1970 * 1000))
        var headers = endpoint.headers
        if endpoint.compression, let compressed = Gzip.compress(body) {
            body = compressed
            headers.append(("Content-Encoding", "gzip"))
        }
        return TransportRequest(
            url: endpoint.url, headers: headers, body: body, timeout: options.retry.requestTimeout,
            connectTimeout: options.retry.connectTimeout)
    }
}

/// What every envelope of one destination shares, made once rather than per envelope (a Sentry destination
/// sends one envelope per event): the URL and its path, the envelope header's constant tail (`dsn`, `sdk`) and the
/// request headers (`X-Sentry-Auth` with the key).
struct SentryEndpoint: Sendable {
    let url: URL
    let path: String
    let headerTail: [UInt8]
    let headers: [(String, String)]
    let compression: Bool

    init(_ configuration: SentryConfiguration) {
        url = configuration.envelopeURL
        path = url.path
        var tail = ",\"dsn\":"
        CohorlyValue.writeString(configuration.dsn, into: &tail)
        tail +=
            ",\"sdk\":{\"name\":\"\(SentryDestination.sdkName)\",\"version\":\"\(AutomaticProperties.libraryVersion)\"}}\n"
        headerTail = Array(tail.utf8)
        let client = "\(SentryDestination.sdkName)/\(AutomaticProperties.libraryVersion)"
        headers = [
            ("Content-Type", "application/x-sentry-envelope"), ("User-Agent", client),
            (
                "X-Sentry-Auth",
                "Sentry sentry_version=7, sentry_client=\(client), sentry_key=\(configuration.publicKey)"
            ),
        ]
        compression = configuration.compression
    }
}
