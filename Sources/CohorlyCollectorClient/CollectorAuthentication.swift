import CohorlyCollectorAPI
import CohorlyHTTPClient
import CohorlyJSON
import Foundation

/// The CLI's side of `CollectorCredential`: the collector's secret never goes on the wire. Each request carries an
/// HMAC of it bound to the `Host` it is sent to, and before the first one the server must prove it holds the secret
/// (`GET /api/auth/challenge`): anything else listening on the collector's address (a neighbour who bound it
/// first) gets neither the secret nor a request body.
package struct CollectorAuthentication {
    /// The collector's base URL (`--host`).
    package let url: URL
    /// The collector's secret (never sent).
    package let secret: String

    /// Authentication with `secret` for the collector at `url`.
    package init(url: URL, secret: String) {
        self.url = url
        self.secret = secret
    }

    /// The `Host` header sent (and covered by the MAC): the URL's host, with its port when it names one.
    package var host: String {
        let name = url.host ?? ""
        let bracketed = name.contains(":") && !name.hasPrefix("[") ? "[\(name)]" : name
        return url.port.map { "\(bracketed):\($0)" } ?? bracketed
    }

    /// `Host` and `Authorization` for one `method` request.
    package func headers(method: String) -> [(String, String)] {
        let time = Int64(Date().timeIntervalSince1970)
        // libcrypto missing: no credential, and the collector answers 401 (the digest failure is said by hashing).
        let authorization =
            (try? CollectorCredential.authorization(secret: secret, method: method, host: host, time: time)) ?? ""
        return [("Host", host), ("Authorization", authorization)]
    }

    /// What went wrong asking the server to prove itself.
    package enum Refusal: Error {
        /// The server answered this status (a 401: the secret is not the collector's) with this body.
        case status(Int, [UInt8])
        /// It answered, but without the proof: not our collector.
        case unproven(String)
        /// It could not be reached (libcurl's message).
        case unreachable(String)
    }

    /// Asks the server at `url` to prove it holds the secret.
    package func verify() -> Refusal? {
        let nonce = CollectorCredential.newNonce()
        let base = url.absoluteString.hasSuffix("/") ? String(url.absoluteString.dropLast()) : url.absoluteString
        guard let target = URL(string: base + CollectorCredential.challengePath + "?nonce=" + nonce) else {
            return .unproven("invalid URL")
        }
        let request = TransportRequest(
            url: target, method: "GET", headers: headers(method: "GET"), body: [], timeout: 30, connectTimeout: 10)
        switch CurlTransport().send(request) {
        case .failure(let message): return .unreachable(message)
        case .http(401, _, let body): return .status(401, body)
        case .http(200, _, let body):
            let answer = CohorlyValue(json: String(decoding: body, as: UTF8.self))
            if answer?["proof"] == .null {
                return .unproven(
                    "it says it has no secret; if it is your collector, run without --auth-token-file and"
                        + " COHORLY_AUTH_TOKEN")
            }
            guard let proof = answer?["proof"]?.stringValue,
                let expected = try? CollectorCredential.proof(secret: secret, host: host, nonce: nonce),
                proof == expected
            else { return .unproven("its answer does not prove it") }
            return nil
        case .http(let status, _, _): return .unproven("it answered \(status) to \(CollectorCredential.challengePath)")
        }
    }

    /// The message for a server that did not prove itself.
    package static func unprovenMessage(_ host: String, _ detail: String) -> String {
        "\(host) did not prove it holds the collector's secret (\(detail)), so nothing was sent to it. Another"
            + " program may be listening on that address (any local user can take a free port): check that"
            + " `cohorly serve` runs there with this secret, and give its URL with --host or COHORLY_HOST."
    }
}
