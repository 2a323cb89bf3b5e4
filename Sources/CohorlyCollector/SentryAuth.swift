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
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == "sentry_key" else { continue }
            let key = parts[1].trimmingCharacters(in: .whitespaces)
            return key.isEmpty ? nil : key
        }
        return nil
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
