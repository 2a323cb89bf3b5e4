import Foundation

/// The public key of a Sentry request (research/sentry.md "DSN, endpoint, auth"), from the first place that has
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

    /// `sentry_key` of an `X-Sentry-Auth` value (the `Sentry ` scheme in any case; pairs split at commas).
    static func headerKey(_ header: String) -> String? {
        var text = Substring(header).drop { $0 == " " }
        guard text.prefix(7).lowercased() == "sentry " else { return nil }
        text = text.dropFirst(7)
        for pair in text.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, trimmed(parts[0]) == "sentry_key" else { continue }
            let key = trimmed(parts[1])
            return key.isEmpty ? nil : String(key)
        }
        return nil
    }

    /// `text` without the spaces and tabs around it (every envelope request asks: no Foundation bridging).
    private static func trimmed(_ text: Substring) -> Substring {
        let blank = { (character: Character) in character == " " || character == "\t" }
        var text = text.drop(while: blank)
        while let last = text.last, blank(last) { text = text.dropLast() }
        return text
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
