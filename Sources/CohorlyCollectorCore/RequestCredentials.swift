import CohorlyCollectorAPI
import Foundation

/// The collector's side of `CollectorCredential`: checks `Cohorly-HMAC` credentials (each nonce taken once) and
/// answers the challenge that proves to the CLI that this server holds the secret.
final class RequestCredentials: @unchecked Sendable {
    /// At most this many nonces are remembered (the last `CollectorCredential.window` seconds' worth, twice over);
    /// when full, new HMAC credentials are refused until old ones age out (Bearer still works).
    static let capacity = 100_000
    private let lock = NSLock()
    private var seen: [String: Int64] = [:]

    /// Whether `request` carries a valid, fresh, unused `Cohorly-HMAC` credential for `secret`, checked against
    /// its own `Host` (which the policy has already matched to this server).
    func accepts(_ request: HTTPRequest, secret: String, now: Int64 = Int64(Date().timeIntervalSince1970)) -> Bool {
        guard !secret.isEmpty, let header = request.header("Authorization"),
            let parts = CollectorCredential.parse(header), abs(now - parts.time) <= CollectorCredential.window,
            let expected = try? CollectorCredential.requestMAC(
                secret: secret, method: request.method, host: request.header("Host") ?? "", time: parts.time,
                nonce: parts.nonce),
            Router.constantTimeEqual(Array(parts.mac.utf8), Array(expected.utf8))
        else { return false }
        return lock.withLock {
            if seen.count >= Self.capacity { seen = seen.filter { now - $0.value <= 2 * CollectorCredential.window } }
            guard seen.count < Self.capacity, seen[parts.nonce] == nil else { return false }
            seen[parts.nonce] = parts.time
            return true
        }
    }
}

extension Router {
    /// `GET /api/auth/challenge?nonce=<32…64 hex>`: `{"status":1,"proof":…}`, the HMAC only a holder of the secret
    /// can compute (CollectorCredential.swift); `{"status":1,"proof":null}` when the collector has no secret.
    func authChallenge(_ request: HTTPRequest) -> HTTPResponse {
        guard let nonce = request.query["nonce"], CollectorCredential.isHex(Substring(nonce), count: 32...64) else {
            return .error(400, "expected ?nonce=<32 to 64 lowercase hex digits>")
        }
        guard let secret = configuration.adminToken else { return .json(200, ["status": 1, "proof": .null]) }
        do {
            let proof = try CollectorCredential.proof(secret: secret, host: request.header("Host") ?? "", nonce: nonce)
            return .json(200, ["status": 1, "proof": .string(proof)])
        } catch {
            return .error(500, "\(error)")
        }
    }
}
