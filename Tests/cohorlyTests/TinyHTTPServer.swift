import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.1 file server on 127.0.0.1 (ephemeral port) for the debuginfod tests: serves
/// `/buildid/<hex>/debuginfo` and `/buildid/<hex>/executable` from a map, 404 for anything else, and counts
/// the requests it answered.
final class TinyHTTPServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let routes: [String: String]
    private let lock = NSLock()
    private var served: [String] = []

    init(routes: [String: String]) throws {
        self.routes = routes
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw CLIFixtureError(reason: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw CLIFixtureError(reason: "bind/listen failed")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Paths requested so far (answered with 200 or 404).
    var requests: [String] { lock.withLock { served } }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            handle(client)
            close(client)
        }
    }

    private func handle(_ client: Int32) {
        var request = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.ends(with: Array("\r\n\r\n".utf8)) {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return }
            request += buffer[0..<count]
        }
        let line = String(decoding: request, as: UTF8.self).split(separator: "\r\n").first ?? ""
        let parts = line.split(separator: " ")
        let path = parts.count > 1 ? String(parts[1]) : ""
        lock.withLock { served.append(path) }
        var response: [UInt8]
        if let file = routes[path], let data = FileManager.default.contents(atPath: file) {
            response = Array(
                "HTTP/1.1 200 OK\r\nContent-Length: \(data.count)\r\nConnection: close\r\n\r\n".utf8)
            if parts.first != "HEAD" { response += data }
        } else {
            response = Array(
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
        }
        var offset = 0
        while offset < response.count {
            let written = response[offset...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            offset += written
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
