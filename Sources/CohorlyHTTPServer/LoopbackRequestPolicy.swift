import Foundation

/// The Host and Origin rules of a server on this machine, shared by the collector (`Router.screen`) and the
/// package's small servers that act on what they are sent (the PostHog compliance adapter):
///
/// - `Host` must name the listening address, `localhost` or a configured name, with the listening port (else
///   421): a web page cannot reach the server through a name it controls (DNS rebinding).
/// - An `Origin` header must be this server's (`http://<allowed host>`; else 403): a page on another site cannot
///   make the server act (a cross-site `text/plain` POST needs no preflight, but the browser says where it came
///   from).
package struct LoopbackRequestPolicy: Sendable {
    /// The address it listens on (`0.0.0.0`: every interface).
    package let bindAddress: String
    /// Host names it answers to besides the bind address and `localhost`.
    package let allowedHosts: [String]

    /// The rules for a server bound to `bindAddress` that also answers to `allowedHosts`.
    package init(bindAddress: String, allowedHosts: [String] = []) {
        self.bindAddress = bindAddress
        self.allowedHosts = allowedHosts
    }

    /// The names `Host` may carry: the bind address, `localhost`, and the configured extra names.
    package var allowedNames: [String] { [bindAddress, "localhost"] + allowedHosts }

    /// The 421 for a foreign `Host`, else nil.
    package func hostRefusal(_ request: HTTPRequest, port: UInt16) -> HTTPResponse? {
        guard let host = request.header("Host"), !allowsHost(host, port: port) else { return nil }
        return .error(
            421, "unknown Host \(host.prefix(80)) (this server answers to \(allowedNames.joined(separator: ", ")))")
    }

    /// The 403 for a foreign `Origin`, else nil.
    package func originRefusal(_ request: HTTPRequest, port: UInt16) -> HTTPResponse? {
        guard let origin = request.header("Origin"), !allowsOrigin(origin, port: port) else { return nil }
        return .error(403, "cross-origin request refused (Origin \(origin.prefix(80)))")
    }

    /// `name[:port]` (or `[v6]:port`) where name is allowed and the port, when given, is ours.
    package func allowsHost(_ host: String, port: UInt16) -> Bool {
        var name = Substring(host.lowercased())
        var givenPort: Substring?
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            name = name[...close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return false }
                givenPort = rest.dropFirst()
            }
        } else if let colon = name.lastIndex(of: ":") {
            givenPort = name[name.index(after: colon)...]
            name = name[..<colon]
        }
        if name.hasSuffix(".") { name = name.dropLast() }
        if let givenPort, port != 0, UInt16(givenPort) != port { return false }
        if allowedNames.contains(where: { $0.lowercased() == name }) { return true }
        // Listening on every interface: any IPv4 literal names this machine, a DNS name may be an attacker's.
        var address = in_addr()
        return bindAddress == "0.0.0.0" && inet_pton(AF_INET, String(name), &address) == 1
    }

    /// `http://<allowed host>` (a browser's `Origin` for a page this server served).
    package func allowsOrigin(_ origin: String, port: UInt16) -> Bool {
        let lower = origin.lowercased()
        guard lower.hasPrefix("http://") else { return false }
        let host = lower.dropFirst("http://".count)
        return !host.contains("/") && allowsHost(String(host), port: port)
    }
}
