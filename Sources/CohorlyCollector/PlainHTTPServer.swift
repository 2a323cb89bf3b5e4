import Foundation

/// The collector's HTTP server without the collector: no request screening, no request log. For programs in this
/// package that need a small loopback HTTP server — the PostHog compliance adapter, the tests' mock PostHog.
package final class PlainHTTPServer: Sendable {
    private let server: HTTPServer

    /// A server answering every request with `handler` (nil drops the connection); bodies up to `maxBodyBytes`.
    package init(maxBodyBytes: Int, handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse?) {
        server = HTTPServer(maxBodyBytes: maxBodyBytes, handler: handler)
    }

    /// Binds `address:port` (0: a free port) and serves; returns the port.
    package func start(address: String = "127.0.0.1", port: UInt16) throws -> UInt16 {
        try server.start(address: address, port: port, memoryLimit: 64 << 10, timeout: 120, perClient: 0)
    }

    /// Stops accepting, closes connections and joins the server threads.
    package func stop() { server.stop() }
}
