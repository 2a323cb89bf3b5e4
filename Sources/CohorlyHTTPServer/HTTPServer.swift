import CMicroHTTPD
import Foundation

/// A small HTTP/1.1 server on libmicrohttpd: one thread per connection, request bodies collected up to a limit
/// (the rest is read and discarded, so the client always gets an answer), headers bounded by the connection
/// memory limit. The `screener` sees each request as soon as its headers arrived and may refuse it at once (the
/// body is then never read). The handler returns nil to drop the connection without an answer. Routes the
/// `streamer` claims (it sees the request without its body) get their body piece by piece instead (uploads to
/// disk, any size). Every answer goes through the request log.
package final class HTTPServer: @unchecked Sendable {
    package typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse?
    package typealias Screener = @Sendable (HTTPRequest, _ port: UInt16) -> HTTPResponse?
    package typealias Streamer = @Sendable (HTTPRequest) -> (any RequestBodySink)?

    let handler: Handler
    let screener: Screener?
    let streamer: Streamer?
    let maxBodyBytes: Int
    let log: RequestLog
    private let lock = NSLock()
    private var daemon: OpaquePointer?
    private var listeningPort: UInt16 = 0
    /// The request-header deadline, when `start` was given one.
    package private(set) var headerDeadline: HeaderDeadline?

    package init(
        maxBodyBytes: Int, log: RequestLog = RequestLog(level: .none, handler: nil), screener: Screener? = nil,
        streamer: Streamer? = nil, handler: @escaping Handler
    ) {
        self.maxBodyBytes = maxBodyBytes
        self.log = log
        self.screener = screener
        self.streamer = streamer
        self.handler = handler
    }

    /// The port it listens on (0 before `start` returned).
    package var port: UInt16 { lock.withLock { listeningPort } }

    deinit { stop() }

    /// Binds and starts serving; returns the port. `perClient` caps connections per client address (0: none),
    /// evicting that address's oldest connection only waiting for headers to admit a new one from it (not
    /// libmicrohttpd's per-IP limit, which refuses the new one);
    /// `headerDeadline` (seconds, 0: none) closes connections whose request headers take longer, and those whose
    /// body then averages under `minimumBodyRate` bytes per second past the same time (0: bodies not watched);
    /// `maxConnections` caps open connections (0: libmicrohttpd's 1,020), evicting one only waiting for headers
    /// to admit a new one at the cap (HeaderDeadline+Admission.swift).
    package func start(
        address: String, port: UInt16, memoryLimit: Int, timeout: UInt32, perClient: UInt32,
        headerDeadline seconds: Double = 0, minimumBodyRate: Double = 0, maxConnections: Int = 0
    ) throws -> UInt16 {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &socketAddress.sin_addr) == 1 else {
            throw HTTPServerError.invalidAddress(address)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        // Connections evicted at the cap close within moments; libmicrohttpd's own limit leaves room for them.
        let hardLimit = maxConnections > 0 ? UInt32(clamping: maxConnections + 64) : 0
        let admits = maxConnections > 0 || perClient > 0
        if seconds > 0 || admits {
            let deadline = HeaderDeadline(
                seconds: seconds, minimumBodyRate: minimumBodyRate, maxConnections: maxConnections,
                perClient: Int(perClient))
            lock.withLock { headerDeadline = deadline }
            deadline.start()
        }
        let started = withUnsafePointer(to: &socketAddress) { pointer in
            cly_mhd_start(
                pointer, httpAccessHandler, context, httpRequestCompleted, memoryLimit, timeout, 0, hardLimit,
                httpConnectionNotified, context, admits ? httpAdmit : nil)
        }
        guard let started else {
            headerDeadline?.stop()
            if let reason = cly_mhd_load_error() { throw HTTPServerError.libraryUnavailable(String(cString: reason)) }
            throw HTTPServerError.cannotListen(address: address, port: port)
        }
        let bound = cly_mhd_port(started)
        lock.withLock {
            daemon = started
            listeningPort = bound
        }
        return bound
    }

    /// Stops accepting, closes connections and joins the server threads.
    package func stop() {
        let running = lock.withLock {
            let current = daemon
            daemon = nil
            return current
        }
        if let running { cly_mhd_stop_daemon(running) }
        lock.withLock { headerDeadline }?.stop()
    }
}

/// Why the server could not start.
public enum HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// The bind address is not an IPv4 address.
    case invalidAddress(String)
    /// libmicrohttpd could not listen (port in use, no permission).
    case cannotListen(address: String, port: UInt16)
    /// libmicrohttpd could not be loaded (the reason names the library and what is wrong).
    case libraryUnavailable(String)

    /// A readable reason.
    public var description: String {
        switch self {
        case .invalidAddress(let address): return "invalid IPv4 bind address \(address)"
        case .cannotListen(let address, let port): return "cannot listen on \(address):\(port)"
        case .libraryUnavailable(let reason): return reason
        }
    }
}

/// The body collected so far for one request (or the sink it streams to).
private final class RequestBody {
    var bytes: [UInt8] = []
    var tooLarge = false
    var sink: (any RequestBodySink)?
    /// An answer was queued from the headers alone; the body (if any) is dropped.
    var answered = false
    /// A refusal decided from the headers, sent once the body was read and dropped (see `drainLimit`).
    var refusal: HTTPResponse?
    /// Body bytes dropped so far for `refusal`.
    var drained = 0
}

/// A request refused from its headers is answered at once when the client waits for `100 Continue` or sends no
/// body; otherwise its body is read and dropped first (a client still sending would see a reset instead of the
/// answer), up to 64 MiB: past that the connection is dropped.
private let drainLimit = 64 << 20

/// Collects key/value pairs from libmicrohttpd iterators.
private final class Pairs {
    var values: [String: String] = [:]
    let lowercaseKeys: Bool
    init(lowercaseKeys: Bool) { self.lowercaseKeys = lowercaseKeys }
}

private func collectPair(
    _ context: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
    _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let context, let key else { return .YES }
    let pairs = Unmanaged<Pairs>.fromOpaque(context).takeUnretainedValue()
    let name = String(cString: key)
    pairs.values[pairs.lowercaseKeys ? name.lowercased() : name] =
        value.map { String(cString: $0) } ?? ""
    return .YES
}

private func values(_ connection: OpaquePointer?, _ kind: MHD_ValueKind, lowercaseKeys: Bool)
    -> [String: String]
{
    let pairs = Pairs(lowercaseKeys: lowercaseKeys)
    let context = Unmanaged.passUnretained(pairs).toOpaque()
    _ = cly_mhd_get_connection_values(connection, kind, collectPair, context)
    return withExtendedLifetime(pairs) { pairs.values }
}

private func clientAddress(_ connection: OpaquePointer?) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    return buffer.withUnsafeMutableBufferPointer { pointer in
        guard let base = pointer.baseAddress else { return "" }
        return String(cString: cly_mhd_client_ip(connection, base, pointer.count))
    }
}

/// libmicrohttpd's access handler: called once with the headers, once per body chunk, once at the end.
private func httpAccessHandler(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadDataSize: UnsafeMutablePointer<Int>?,
    _ connectionContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let context, let connectionContext, let uploadDataSize else { return .NO }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    let head = {
        HTTPRequest(
            method: method.map { String(cString: $0) } ?? "GET",
            path: url.map { String(cString: $0) } ?? "/",
            query: values(connection, .GET_ARGUMENT_KIND, lowercaseKeys: false),
            headers: values(connection, .HEADER_KIND, lowercaseKeys: true), clientAddress: clientAddress(connection))
    }
    let key = connection.map { UnsafeMutableRawPointer($0) }
    guard let stored = connectionContext.pointee else {
        if let key { server.headerDeadline?.headersArrived(key) }
        /// The body is read next: its pace is watched until it is complete.
        func readBody() -> MHD_Result {
            if let key { server.headerDeadline?.bodyExpected(key, fd: cly_mhd_connection_fd(connection)) }
            return .YES
        }
        let body = RequestBody()
        connectionContext.pointee = Unmanaged.passRetained(body).toOpaque()
        let request = head()
        var early = server.screener?(request, server.port)
        if early == nil, let sink = server.streamer?(request) {
            guard let rejected = sink as? RejectedUpload else {
                body.sink = sink
                return readBody()
            }
            guard let answer = rejected.answer else {
                server.log.record(request, nil)
                return .NO
            }
            early = answer
        }
        let length = request.header("Content-Length").flatMap { Int($0) } ?? 0
        guard let early else {
            // The body in one allocation: grown by doubling, a 1 MB batch was copied 16 times, each time into
            // fresh pages. Content-Length is only the client's word, so at most the body limit is reserved (and
            // its pages are touched only as bytes arrive).
            if length > 0 { body.bytes.reserveCapacity(min(length, server.maxBodyBytes)) }
            return readBody()
        }
        let chunked = request.header("Transfer-Encoding")?.lowercased().contains("chunked") == true
        guard request.header("Expect")?.lowercased() == "100-continue" || (length == 0 && !chunked) else {
            body.refusal = early
            return readBody()
        }
        // Refused from its headers: answered now, the body is never read (the connection closes after).
        body.answered = true
        server.log.record(request, early)
        return queue(early, on: connection)
    }
    let body = Unmanaged<RequestBody>.fromOpaque(stored).takeUnretainedValue()
    if body.answered {
        uploadDataSize.pointee = 0
        return .YES
    }
    if let refusal = body.refusal {
        body.drained += uploadDataSize.pointee
        guard body.drained <= drainLimit else {
            server.log.record(head(), nil)
            return .NO
        }
        guard uploadDataSize.pointee == 0 else {
            if let key { server.headerDeadline?.bodyReceived(key, uploadDataSize.pointee) }
            uploadDataSize.pointee = 0
            return .YES
        }
        if let key { server.headerDeadline?.bodyComplete(key) }
        server.log.record(head(), refusal)
        return queue(refusal, on: connection)
    }
    if uploadDataSize.pointee > 0 {
        let count = uploadDataSize.pointee
        if let key { server.headerDeadline?.bodyReceived(key, count) }
        if let sink = body.sink {
            if let uploadData, !sink.append(UnsafeRawBufferPointer(start: uploadData, count: count)) {
                server.log.record(head(), nil)
                return .NO
            }
        } else if !body.tooLarge, body.bytes.count + count <= server.maxBodyBytes, let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: count) {
                body.bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
            }
        } else {
            body.tooLarge = true
            body.bytes = []
        }
        uploadDataSize.pointee = 0
        return .YES
    }
    if let key { server.headerDeadline?.bodyComplete(key) }
    var request = head()
    let answer: HTTPResponse?
    if let sink = body.sink {
        answer = sink.finish(request)
        body.sink = nil
    } else {
        request.body = body.bytes
        request.bodyTooLarge = body.tooLarge
        answer = server.handler(request)
        request.body = []
    }
    server.log.record(request, answer)
    guard let answer else { return .NO }
    return queue(answer, on: connection)
}

/// Queues `answer` on `connection` (a failure to build the response drops the connection).
private func queue(_ answer: HTTPResponse, on connection: OpaquePointer?) -> MHD_Result {
    guard let response = makeResponse(answer) else { return .NO }
    for (name, value) in answer.headers { _ = cly_mhd_add_response_header(response, name, value) }
    let status = (100...599).contains(answer.status) ? UInt32(answer.status) : 500
    let result = cly_mhd_queue_response(connection, status, response)
    cly_mhd_destroy_response(response)
    return result
}

/// A libmicrohttpd response: the body bytes copied, or the body file streamed from its descriptor.
private func makeResponse(_ answer: HTTPResponse) -> OpaquePointer? {
    guard let path = answer.bodyFile else {
        return answer.body.withUnsafeBufferPointer { bytes in cly_mhd_response_copy(bytes.count, bytes.baseAddress) }
    }
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    var info = stat()
    guard fstat(fd, &info) == 0, let response = cly_mhd_response_from_fd(UInt64(clamping: info.st_size), fd) else {
        close(fd)
        return nil
    }
    return response  // owns `fd` now: libmicrohttpd closes it with the response
}

/// Tells the header deadline when connections open and close.
private func httpConnectionNotified(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ code: MHD_ConnectionNotificationCode
) {
    guard let context, let connection else { return }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    guard let deadline = server.headerDeadline else { return }
    let key = UnsafeMutableRawPointer(connection)
    if code == .CONNECTION_NOTIFY_STARTED {
        deadline.opened(key, fd: cly_mhd_connection_fd(connection), address: clientAddress(connection))
    } else {
        deadline.closed(key)
    }
}

/// libmicrohttpd's accept policy: the connection caps (`HeaderDeadline.admit`).
private func httpAdmit(
    _ context: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t
) -> MHD_Result {
    guard let context, let address else { return .YES }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    guard let deadline = server.headerDeadline else { return .YES }
    var text = [CChar](repeating: 0, count: 64)
    let family = Int32(address.pointee.sa_family)
    text.withUnsafeMutableBufferPointer { buffer in
        guard let base = buffer.baseAddress else { return }
        if family == AF_INET {
            address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                var bits = inet.pointee.sin_addr
                _ = inet_ntop(AF_INET, &bits, base, socklen_t(buffer.count))
            }
        } else if family == AF_INET6 {
            address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                var bits = inet.pointee.sin6_addr
                _ = inet_ntop(AF_INET6, &bits, base, socklen_t(buffer.count))
            }
        }
    }
    let name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return deadline.admit(name) ? .YES : .NO
}

/// Frees the per-request body when libmicrohttpd is done with the request; on a connection kept alive, the next
/// request's headers are due from now.
private func httpRequestCompleted(
    _ context: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
    _ connectionContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ reason: MHD_RequestTerminationCode
) {
    if reason == .REQUEST_TERMINATED_COMPLETED_OK, let context, let connection {
        let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
        server.headerDeadline?.expectHeaders(
            UnsafeMutableRawPointer(connection), fd: cly_mhd_connection_fd(connection))
    }
    guard let connectionContext, let stored = connectionContext.pointee else { return }
    Unmanaged<RequestBody>.fromOpaque(stored).release()
    connectionContext.pointee = nil
}
