import Foundation

/// The collector's HTTP server without the collector: no request log, and no request screening unless given a
/// `LoopbackRequestPolicy` (the collector's Host and Origin rules). For programs in this package that need a small
/// loopback HTTP server — the PostHog compliance adapter (screened: it acts on what it is sent), the tests' mock
/// PostHog.
package final class PlainHTTPServer: Sendable {
    private let server: HTTPServer

    /// A server answering every request with `handler` (nil drops the connection); bodies up to `maxBodyBytes`.
    /// With a `policy`, a request with a foreign `Host` gets 421 and one with a foreign `Origin` 403, before its
    /// body is read.
    package init(
        maxBodyBytes: Int, policy: LoopbackRequestPolicy? = nil,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse?
    ) {
        var screener: HTTPServer.Screener?
        if let policy {
            screener = { request, port in
                policy.hostRefusal(request, port: port) ?? policy.originRefusal(request, port: port)
            }
        }
        server = HTTPServer(maxBodyBytes: maxBodyBytes, screener: screener, handler: handler)
    }

    /// Binds `address:port` (0: a free port) and serves; returns the port.
    package func start(address: String = "127.0.0.1", port: UInt16) throws -> UInt16 {
        try server.start(address: address, port: port, memoryLimit: 64 << 10, timeout: 120, perClient: 0)
    }

    /// Stops accepting, closes connections and joins the server threads.
    package func stop() { server.stop() }
}
