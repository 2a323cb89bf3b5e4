import CohorlyDigests

/// How the CLI proves it holds the collector's secret without sending it, and how the collector proves it holds it
/// too (docs/collector.md, "Authentication"): any local user can bind the collector's address before it starts, so
/// the CLI must not hand the secret to whatever answers there.
///
/// - Every request carries `Authorization: Cohorly-HMAC t=<unix seconds>, n=<nonce>, mac=<hex>`, the MAC being
///   HMAC-SHA256(secret, "cohorly-request\n" METHOD "\n" HOST "\n" t "\n" n): bound to the `Host` the client
///   aimed at (so a listener on another port cannot relay it to the collector, whose `Host` check refuses other
///   ports), fresh (the collector takes a nonce once, within 5 minutes of its time).
/// - Before the first request a command asks `GET /api/auth/challenge?nonce=<its own nonce>`; the collector answers
///   `{"proof":HMAC-SHA256(secret, "cohorly-collector\n" HOST "\n" nonce)}`, which only a holder of the secret can
///   compute. Without it the CLI stops: a squatter learns neither the secret nor any request body.
/// - `Authorization: Bearer <secret>` keeps working for curl and scripts.
package enum CollectorCredential {
    /// The `Authorization` scheme.
    package static let scheme = "Cohorly-HMAC"
    /// The route answering the collector's proof.
    package static let challengePath = "/api/auth/challenge"
    /// How far a request's time may be from the collector's, in seconds.
    package static let window: Int64 = 300

    /// The parts of a `Cohorly-HMAC` credential.
    package struct Parts: Sendable, Equatable {
        /// Unix seconds when the client made it.
        package var time: Int64
        /// 32 to 64 lowercase hex digits, chosen at random by the client.
        package var nonce: String
        /// The MAC, lowercase hex.
        package var mac: String
    }

    /// A fresh random nonce (128 bits, lowercase hex).
    package static func newNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let text = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }.joined()
    }

    /// The MAC of a request.
    package static func requestMAC(secret: String, method: String, host: String, time: Int64, nonce: String)
        throws(DigestFailure) -> String
    {
        try HMAC.sha256Hex(
            key: Array(secret.utf8), message: Array("cohorly-request\n\(method)\n\(host)\n\(time)\n\(nonce)".utf8))
    }

    /// The collector's proof for a challenge nonce.
    package static func proof(secret: String, host: String, nonce: String) throws(DigestFailure) -> String {
        try HMAC.sha256Hex(key: Array(secret.utf8), message: Array("cohorly-collector\n\(host)\n\(nonce)".utf8))
    }

    /// The `Authorization` value for one request.
    package static func authorization(secret: String, method: String, host: String, time: Int64)
        throws(DigestFailure) -> String
    {
        let nonce = newNonce()
        let mac = try requestMAC(secret: secret, method: method, host: host, time: time, nonce: nonce)
        return "\(scheme) t=\(time), n=\(nonce), mac=\(mac)"
    }

    /// The parts of an `Authorization` value in this scheme (scheme in any case), else nil.
    package static func parse(_ header: String) -> Parts? {
        let trimmed = header.drop { $0 == " " }
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == scheme.lowercased() else {
            return nil
        }
        var fields: [Substring: Substring] = [:]
        for pair in trimmed[space...].split(separator: ",") {
            let field = pair.drop { $0 == " " }
            guard let equals = field.firstIndex(of: "=") else { return nil }
            fields[field[..<equals]] = field[field.index(after: equals)...]
        }
        guard let time = fields["t"].flatMap({ Int64($0) }), let nonce = fields["n"], let mac = fields["mac"],
            isHex(nonce, count: 32...64), isHex(mac, count: 64...64)
        else { return nil }
        return Parts(time: time, nonce: String(nonce), mac: String(mac))
    }

    /// Lowercase hex of a length in `count`.
    package static func isHex(_ text: Substring, count: ClosedRange<Int>) -> Bool {
        count.contains(text.utf8.count)
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
