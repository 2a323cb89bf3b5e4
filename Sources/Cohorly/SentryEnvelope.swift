import CohorlyCompression
import Foundation

/// One Sentry envelope (research/sentry.md "Envelope framing"): a header line of compact JSON (`event_id` when an
/// event is inside, `sent_at` once, `dsn`, `sdk`), then per item a header line (`type`, `length` in bytes) and its
/// payload, each followed by `\n`.
struct SentryEnvelope {
    /// One item: its type (`event`, `session`) and payload (JSON text).
    struct Item {
        var type: String
        var payload: String
    }

    var eventId: String?
    var items: [Item]

    /// The envelope's bytes, `sent_at` = `sentAtMs`.
    func bytes(dsn: String, sentAtMs: Int64) -> [UInt8] {
        var header = "{"
        if let eventId { header += "\"event_id\":\"\(eventId)\"," }
        header += "\"sent_at\":\"\(RFC3339.format(milliseconds: sentAtMs))\",\"dsn\":"
        CohorlyValue.writeString(dsn, into: &header)
        header +=
            ",\"sdk\":{\"name\":\"\(SentryDestination.sdkName)\",\"version\":\"\(AutomaticProperties.libraryVersion)\"}}\n"
        var out = Array(header.utf8)
        out.reserveCapacity(items.reduce(out.count) { $0 + $1.payload.utf8.count + 48 })
        for item in items {
            out += Array("{\"type\":\"\(item.type)\",\"length\":\(item.payload.utf8.count)}\n".utf8)
            out += Array(item.payload.utf8)
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// The request that posts it.
    func request(_ configuration: SentryConfiguration, options: CohorlyOptions) -> TransportRequest {
        var body = bytes(dsn: configuration.dsn, sentAtMs: Int64(Date().timeIntervalSince1970 * 1000))
        let client = "\(SentryDestination.sdkName)/\(AutomaticProperties.libraryVersion)"
        var headers = [
            ("Content-Type", "application/x-sentry-envelope"), ("User-Agent", client),
            (
                "X-Sentry-Auth",
                "Sentry sentry_version=7, sentry_client=\(client), sentry_key=\(configuration.publicKey)"
            ),
        ]
        if configuration.compression, let compressed = Gzip.compress(body) {
            body = compressed
            headers.append(("Content-Encoding", "gzip"))
        }
        return TransportRequest(
            url: configuration.envelopeURL, headers: headers, body: body, timeout: options.retry.requestTimeout,
            connectTimeout: options.retry.connectTimeout)
    }
}
