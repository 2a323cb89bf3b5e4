import CCurl
import Foundation

/// The libcurl transport (the default). Redirects are followed by hand: only 307/308 to the same origin
/// (scheme, host and port), at most 5 hops, re-sending the same body and headers; anything else is returned
/// as the 3xx answer, so the token never reaches another origin. Timeouts are in milliseconds, so sub-second
/// values work (`CURLOPT_NOSIGNAL` keeps them thread-safe).
public final class CurlTransport: Transport, @unchecked Sendable {
    /// Most redirects followed for one request.
    public static let maxRedirects = 5
    private let lock = NSLock()
    /// Connections kept alive between requests (one per request that ran at the same time, up to `maxIdle`).
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private static let maxIdle = 8

    /// A transport that keeps its connections alive between requests. libcurl is loaded (and initialised) here,
    /// on the creating thread — not at exec, and not later on the delivery thread: loading there could run
    /// while the app calls exit(), whose teardown of the TLS libraries then crashes the half-initialised ones.
    /// A missing libcurl is reported by the first request (the events stay queued).
    public init() { _ = cly_curl_load_error() }

    deinit {
        for handle in idleHandles { cly_curl_easy_cleanup(handle) }
    }

    /// Performs the request, following only same-origin 307/308 redirects.
    public func send(_ request: TransportRequest) -> TransportResponse { exchange(request).response }

    /// ``send(_:)``, also returning the answer's headers (names lowercased; the last hop's).
    package func exchange(_ request: TransportRequest) -> (response: TransportResponse, headers: [String: String]) {
        guard let handle = takeHandle() else {
            // libcurl missing or broken: a transport failure, so the events stay queued for a later try.
            return (.failure(cly_curl_load_error().map { String(cString: $0) } ?? "curl_easy_init failed"), [:])
        }
        defer { returnHandle(handle) }
        var url = request.url
        for _ in 0...Self.maxRedirects {
            let (response, location, headers) = perform(handle, request, url: url)
            guard case .http(let status, _, _) = response, status == 307 || status == 308, let location,
                let next = URL(string: location, relativeTo: url)?.absoluteURL, Self.sameOrigin(url, next)
            else {
                return (response, headers)
            }
            url = next
        }
        return (.failure("too many redirects"), [:])
    }

    /// True when both URLs share scheme, host and (default-filled) port.
    package static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        return a.scheme?.lowercased() == b.scheme?.lowercased()
            && a.host?.lowercased() == b.host?.lowercased()
            && port(a) == port(b)
    }

    private func takeHandle() -> UnsafeMutableRawPointer? {
        lock.lock()
        let handle = idleHandles.popLast()
        lock.unlock()
        return handle ?? cly_curl_easy_init()
    }

    private func returnHandle(_ handle: UnsafeMutableRawPointer) {
        lock.lock()
        if idleHandles.count < Self.maxIdle {
            idleHandles.append(handle)
            lock.unlock()
        } else {
            lock.unlock()
            cly_curl_easy_cleanup(handle)
        }
    }

    private func perform(_ handle: UnsafeMutableRawPointer, _ request: TransportRequest, url: URL)
        -> (TransportResponse, String?, [String: String])
    {
        cly_curl_easy_reset(handle)
        let sink = ResponseSink()
        let sinkPointer = Unmanaged.passUnretained(sink).toOpaque()
        var headers: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.headers {
            headers = cly_curl_slist_append(headers, "\(name): \(value)")
        }
        headers = cly_curl_slist_append(headers, "Expect:")
        defer { cly_curl_slist_free_all(headers) }

        _ = cly_curl_setopt_string(handle, CURLOPT_URL, url.absoluteString)
        _ = cly_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = cly_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = cly_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(request.timeout * 1000)))
        _ = cly_curl_setopt_long(
            handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(request.connectTimeout * 1000)))
        _ = cly_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
        _ = cly_curl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteBody)
        _ = cly_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, sinkPointer)
        _ = cly_curl_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlWriteHeader)
        _ = cly_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, sinkPointer)

        let code: CURLcode = request.body.withUnsafeBufferPointer { body in
            if request.method == "GET" {
                _ = cly_curl_setopt_long(handle, CURLOPT_HTTPGET, 1)
            } else {
                _ = cly_curl_setopt_long(handle, CURLOPT_POST, 1)
                _ = cly_curl_setopt_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
                let bytes =
                    UnsafeMutableRawPointer(mutating: body.baseAddress)
                    ?? UnsafeMutableRawPointer(sinkPointer)
                _ = cly_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, bytes)
                if request.method != "POST" {
                    _ = cly_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
                }
            }
            return cly_curl_easy_perform(handle)
        }
        withExtendedLifetime(sink) {}
        guard code == CURLE_OK else {
            return (.failure(String(cString: cly_curl_easy_strerror(code))), nil, [:])
        }
        var status = 0
        _ = cly_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var location: UnsafeMutablePointer<CChar>?
        _ = cly_curl_getinfo_string(handle, CURLINFO_REDIRECT_URL, &location)
        return (
            .http(status: status, retryAfter: sink.retryAfter, body: sink.body),
            location.map { String(cString: $0) }, sink.headers
        )
    }
}

/// Collects the body, the headers and `Retry-After` of the current exchange (only the last hop's headers).
private final class ResponseSink {
    var body: [UInt8] = []
    var retryAfter: Double?
    var headers: [String: String] = [:]

    func header(_ line: String) {
        if line.hasPrefix("HTTP/") {
            retryAfter = nil
            headers.removeAll()
            body.removeAll()
            return
        }
        let utf8 = line.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = Self.trimmed(utf8[..<colon]).lowercased()
        let value = Self.trimmed(utf8[utf8.index(after: colon)...])
        if headers.count < 100 { headers[name] = value }
        guard name == "retry-after" else { return }
        if let seconds = Double(value), seconds >= 0 {
            retryAfter = seconds
        } else {
            // The HTTP-date form: the delay is the time left until then.
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            if let date = formatter.date(from: value) { retryAfter = max(0, date.timeIntervalSinceNow) }
        }
    }
}

extension ResponseSink {
    /// `bytes` without the spaces, tabs, CRs and LFs around them. Runs for every header line of every answer (a
    /// Sentry destination gets one answer per event), so without Foundation's bridged trimming.
    static func trimmed(_ bytes: Substring.UTF8View) -> String {
        let blank = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}

/// What libcurl hands a write callback: the sink behind `context` and the chunk's bytes, or nil (abort).
private func curlChunk(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> (sink: ResponseSink, bytes: UnsafeBufferPointer<UInt8>)? {
    guard let data, let context else { return nil }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    let bytes = UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self)
    return (sink, UnsafeBufferPointer(start: bytes, count: length))
}

private func curlWriteBody(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ context: UnsafeMutableRawPointer?
)
    -> Int
{
    guard let (sink, bytes) = curlChunk(data, size, count, context),
        sink.body.count + bytes.count <= 16 << 20
    else { return 0 }
    sink.body.append(contentsOf: bytes)
    return bytes.count
}

private func curlWriteHeader(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ context: UnsafeMutableRawPointer?
)
    -> Int
{
    guard let (sink, bytes) = curlChunk(data, size, count, context) else { return 0 }
    sink.header(String(decoding: bytes, as: UTF8.self))
    return bytes.count
}
