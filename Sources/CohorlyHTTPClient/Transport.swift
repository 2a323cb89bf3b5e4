import Foundation

/// One HTTP request the client sends: always a `POST` of a JSON body unless `method` says otherwise.
public struct TransportRequest: Sendable {
    /// The full URL.
    public var url: URL
    /// The HTTP method. Default `POST`.
    public var method: String = "POST"
    /// Header names and values (the token header among them).
    public var headers: [(String, String)]
    /// The request body.
    public var body: [UInt8]
    /// Whole-request timeout in seconds.
    public var timeout: Double
    /// Connection timeout in seconds.
    public var connectTimeout: Double

    /// A request.
    public init(
        url: URL, method: String = "POST", headers: [(String, String)], body: [UInt8], timeout: Double,
        connectTimeout: Double
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.connectTimeout = connectTimeout
    }
}

/// What came back: an HTTP answer, or a transport failure (no answer at all).
public enum TransportResponse: Sendable, Equatable {
    /// An HTTP answer with its status, `Retry-After` seconds (if sent) and body.
    case http(status: Int, retryAfter: Double?, body: [UInt8])
    /// A network error or timeout, with a description for the debug log.
    case failure(String)

    /// The HTTP status, or nil for a network error.
    public var status: Int? {
        if case .http(let status, _, _) = self { return status }
        return nil
    }
}

/// The seam between the client and the network. Contract: `send` blocks its (background) caller until the
/// exchange ends, never throws, follows redirects only the way the Cohorly contract allows (same-origin 307/308,
/// at most 5 hops, body and headers kept; the token never leaves the origin), and is safe to call from any thread.
public protocol Transport: Sendable {
    /// Performs one exchange.
    func send(_ request: TransportRequest) -> TransportResponse
}
