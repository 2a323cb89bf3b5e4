import CohorlyJSON

/// A request as the server read it.
public struct HTTPRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path, without the query.
    public var path: String
    /// Query arguments.
    public var query: [String: String]
    /// Header lookup by lowercase name.
    public var headers: [String: String]
    /// The body (empty when it was over the size limit; see `bodyTooLarge`).
    public var body: [UInt8]
    /// True when the body exceeded the limit and was discarded.
    public var bodyTooLarge: Bool
    /// The client's IP address (empty when unknown).
    public var clientAddress: String

    /// A request value.
    public init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
        body: [UInt8] = [],
        bodyTooLarge: Bool = false, clientAddress: String = ""
    ) {
        self.clientAddress = clientAddress
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.bodyTooLarge = bodyTooLarge
    }

    /// A header value by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A response to send.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Extra headers.
    public var headers: [(String, String)]
    /// The body.
    public var body: [UInt8]
    /// A file whose contents are the body, streamed by the server instead of `body` (nil: use `body`).
    package var bodyFile: String?
    /// Why the request was refused (an error answer's message), for the request log.
    package var reason: String?

    /// A response value (JSON content type unless `headers` says otherwise).
    public init(
        status: Int, headers: [(String, String)] = [("Content-Type", "application/json")], body: [UInt8]
    ) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response.
    package static func json(_ status: Int, _ value: CohorlyValue, headers: [(String, String)] = [])
        -> HTTPResponse
    {
        HTTPResponse(
            status: status, headers: [("Content-Type", "application/json")] + headers,
            body: Array(value.jsonString.utf8))
    }

    /// The file at `path` as an `application/octet-stream` body, streamed from disk.
    package static func file(_ path: String, headers: [(String, String)] = []) -> HTTPResponse {
        var response = HTTPResponse(
            status: 200, headers: [("Content-Type", "application/octet-stream")] + headers, body: [])
        response.bodyFile = path
        return response
    }

    /// `{"status":0,"error":message}`.
    package static func error(_ status: Int, _ message: String, headers: [(String, String)] = [])
        -> HTTPResponse
    {
        var response = json(status, ["status": 0, "error": .string(message)], headers: headers)
        response.reason = message
        return response
    }
}
