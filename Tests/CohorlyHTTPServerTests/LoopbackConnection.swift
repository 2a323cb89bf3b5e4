import CohorlyHTTPServer
import Foundation

/// A raw TCP connection to a server on 127.0.0.1, so a test controls every byte sent (partial headers, a body
/// shorter or longer than announced) and sees every byte answered. Reads give up after 5 s. Used by one thread at
/// a time.
final class LoopbackConnection: @unchecked Sendable {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)

    init(port: UInt16) throws {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw LoopbackError(reason: "cannot connect to port \(port): errno \(errno)") }
    }

    deinit { close(fd) }

    func write(_ text: String) { write(Array(text.utf8)) }

    func write(_ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// No more bytes from this side.
    func finishWriting() { shutdown(fd, Int32(SHUT_WR)) }

    private var pending: [UInt8] = []

    /// Reads more into `pending`: false at the end (closed or reset), nil when nothing came in 5 s.
    private func fill() -> Bool? {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            pending += buffer[..<count]
            return true
        }
        if count == 0 || errno == ECONNRESET { return false }
        return nil
    }

    /// The next whole answer (head and a `Content-Length` body); nil when the connection ends or stalls first.
    func readResponse() -> LoopbackResponse? {
        while true {
            if let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
                let length = headers["content-length"].flatMap { Int($0) } ?? 0
                while pending.count < end.upperBound + length {
                    guard fill() == true else { return nil }
                }
                let body = Array(pending[end.upperBound..<end.upperBound + length])
                pending.removeFirst(end.upperBound + length)
                return LoopbackResponse(status: status, headers: headers, body: body)
            }
            guard fill() == true else { return nil }
        }
    }

    /// Everything until the server closes: "" when it closed without answering; nil when it still holds the
    /// connection open after 5 s.
    func readToEnd() -> String? {
        while true {
            guard let more = fill() else { return nil }
            if !more { return String(decoding: pending, as: UTF8.self) }
        }
    }
}

/// An answer as read off the socket.
struct LoopbackResponse {
    var status: Int
    /// By lowercase name.
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

struct LoopbackError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

/// The requests a handler saw, in order (handlers run on the server's connection threads).
final class SeenRequests: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [HTTPRequest] = []

    func append(_ request: HTTPRequest) { lock.withLock { requests.append(request) } }

    var all: [HTTPRequest] { lock.withLock { requests } }
}
