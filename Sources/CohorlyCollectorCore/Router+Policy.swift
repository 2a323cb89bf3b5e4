import Foundation

/// What every request must pass before it is routed, checked in one place as soon as its headers arrived (before
/// any body is read), for every route present and future:
///
/// - `Host` names the listening address, `localhost`, a configured name or the web pages' own name
///   (`WebSessions.hostName`, never told in the refusal), with the listening port (else 421): a web page cannot
///   reach the collector through a name it controls (DNS rebinding).
/// - On `/api/*` and `/admin/*` (uploads included) an `Origin` header must be this server's (else 403): a web page
///   cannot read or change what the collector holds.
/// - Those routes need `Authorization: Bearer <secret>` when the collector has a secret (scheme in any case,
///   compared in constant time; else 401), or a `Cohorly-HMAC` credential that proves the secret without sending
///   it (the CLI's, CollectorCredential.swift).
/// - Every other `POST` (the ingestion routes) must say `Content-Type: application/json` (else 415): a page can
///   send a cross-site `text/plain` or form POST without asking, but not a JSON one. A wire's route
///   (`WireRoute.Screening`, IngestionWire.swift) says how it is screened: as an ingestion route, as one with its
///   own media type (not a type a page may send cross-site without asking) that also needs an `Origin` of this
///   server when one is sent, and its key (checked by the wire), never the admin secret — a Sentry envelope —,
///   or under the admin secret like the rest of `/api/*`.
/// - The web pages (`/`, `/issues/…`, `/events/…`, `/login`) have their own rules after the `Host` check: a
///   session, and forms from this origin only (`webRefusal`, Router+WebPolicy.swift).
extension Router {
    /// Nil when `request` may go on, else the answer refusing it.
    func screen(_ request: HTTPRequest, port: UInt16) -> HTTPResponse? {
        let policy = LoopbackRequestPolicy(
            bindAddress: configuration.bindAddress, allowedHosts: configuration.allowedHosts)
        if !web.isWebHost(request.header("Host"), port: port), let refusal = policy.hostRefusal(request, port: port) {
            return refusal
        }
        if Self.isWebPath(request.path) { return webRefusal(request, port: port) }  // Router+WebPolicy.swift
        let wire = wireRoute(request.path)  // IngestionWire.swift
        let guarded =
            wire.map { $0.route.screening == .collectorSecret }
            ?? (request.path.hasPrefix("/api/") || request.path.hasPrefix("/admin/"))
        var expectedType = "application/json"
        var ownMediaType = false
        if case .mediaType(let type) = wire?.route.screening { (expectedType, ownMediaType) = (type, true) }
        if guarded || ownMediaType, let refusal = policy.originRefusal(request, port: port) { return refusal }
        if guarded {
            if let secret = configuration.adminToken, !Self.credentialMatches(request.header("Authorization"), secret),
                !credentials.accepts(request, secret: secret)
            {
                return .error(
                    401, "missing or wrong credential (Authorization: Bearer <secret>)",
                    headers: [("WWW-Authenticate", "Bearer")])
            }
        } else if request.method == "POST" {
            let mediaType = request.header("Content-Type")?.split(separator: ";").first.map(Self.mediaType)
            guard mediaType == expectedType else {
                // A vendor's clients read the tag of their own error body; the Cohorly routes keep theirs.
                return wire?.wire.refusal(415, tag: "unsupported_content_type", "Content-Type must be \(expectedType)")
                    ?? .error(415, "content type must be \(expectedType)")
            }
        }
        return nil
    }

    /// A media type without the blanks around it, lowercased (every POST asks, some clients once per event: no
    /// Foundation bridging).
    package static func mediaType(_ text: Substring) -> String {
        let blank = { (character: Character) in character == " " || character == "\t" }
        var text = text.drop(while: blank)
        while let last = text.last, blank(last) { text = text.dropLast() }
        return text.lowercased()
    }

    /// `Bearer <secret>` with the scheme in any case (RFC 7235), compared in time independent of where they
    /// differ. An empty secret never matches.
    static func credentialMatches(_ header: String?, _ secret: String) -> Bool {
        guard let header, !secret.isEmpty else { return false }
        let trimmed = header.drop { $0 == " " }
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bearer" else { return false }
        let credential = trimmed[space...].drop { $0 == " " }
        return constantTimeEqual(Array(credential.utf8), Array(secret.utf8))
    }

    /// Equal bytes, in time that depends on the lengths only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
