import CohorlyCollectorCore
import Foundation

/// The public key of a Sentry request (docs/sentry.md "DSN"), from the first place that has
/// one: the `X-Sentry-Auth` header (`Sentry sentry_version=7, sentry_client=…, sentry_key=…`), the
/// `sentry_key` query parameter, or the envelope header's `dsn` (`{scheme}://{key}[:{secret}]@{host}/…`).
/// The collector checks it like a project token.
enum SentryAuth {
    /// The key, nil when no place names one.
    static func key(_ request: HTTPRequest, envelopeHeader: [String: JSONValue]?) -> String? {
        if let header = request.header("X-Sentry-Auth"), let key = headerKey(header) { return key }
        if let key = request.query["sentry_key"], !key.isEmpty { return key }
        if let dsn = envelopeHeader?["dsn"]?.stringValue { return dsnKey(dsn) }
        return nil
    }

    /// `sentry_key` of an `X-Sentry-Auth` value (the `Sentry ` scheme in any case; pairs split at commas), read
    /// as bytes: every envelope request asks.
    static func headerKey(_ header: String) -> String? {
        var text = Substring(header).utf8.drop { $0 == UInt8(ascii: " ") }
        guard text.count >= 7, String(decoding: text.prefix(7), as: UTF8.self).lowercased() == "sentry " else {
            return nil
        }
        text = text.dropFirst(7)
        for pair in text.split(separator: UInt8(ascii: ",")) {
            // As `split(separator: "=", maxSplits: 1)` reads it: a pair with nothing after `=` names nothing.
            guard let equals = pair.firstIndex(of: UInt8(ascii: "=")), pair.index(after: equals) < pair.endIndex,
                trimmed(pair[..<equals]).elementsEqual("sentry_key".utf8)
            else { continue }
            let key = trimmed(pair[pair.index(after: equals)...])
            return key.isEmpty ? nil : String(decoding: key, as: UTF8.self)
        }
        return nil
    }

    /// `text` without the spaces and tabs around it.
    private static func trimmed(_ text: Substring.UTF8View.SubSequence) -> Substring.UTF8View.SubSequence {
        let blank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) })
        else { return text[text.endIndex...] }
        return text[first...last]
    }

    /// The public key of a DSN: what stands between `://` and `@` (before a `:` secret).
    static func dsnKey(_ dsn: String) -> String? {
        guard let scheme = dsn.range(of: "://") else { return nil }
        let rest = dsn[scheme.upperBound...]
        guard let at = rest.firstIndex(of: "@") else { return nil }
        let user = rest[..<at]
        guard !user.contains("/") else { return nil }
        let key = user.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return key.isEmpty ? nil : String(key)
    }
}
