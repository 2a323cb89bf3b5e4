import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Slow or many connections from one client cannot lock the others out.
@Suite struct HeldConnectionTests {
    /// A TCP connection to the collector from `source` (a loopback address), with a 5 s receive timeout.
    final class RawConnection {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)

        convenience init(_ collector: Collector, from source: String = "127.0.0.1") throws {
            try self.init(port: collector.port, from: source)
        }

        init(port: UInt16, from source: String = "127.0.0.1") throws {
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0, connected == 0 else { throw FixtureError(reason: "cannot connect from \(source)") }
        }

        deinit { close(fd) }

        func write(_ text: String) { write(Array(text.utf8)) }

        func write(_ bytes: [UInt8]) {
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// What the server sends until it closes the connection; nil when it neither answers nor closes in 5 s.
        func readToEnd() -> String? {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count > 0 {
                    received += buffer[..<count]
                    if String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
                        return String(decoding: received, as: UTF8.self)
                    }
                    continue
                }
                if count == 0 || errno == ECONNRESET { return String(decoding: received, as: UTF8.self) }
                return nil  // timed out: still held open
            }
        }
    }

    @Test func headersThatTakeTooLongCloseTheConnection() throws {
        let collector = try startCollector { $0.headerDeadline = 0.3 }
        defer { collector.stop() }
        let slow = try RawConnection(collector)
        slow.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
        // Closed by the deadline (after 0.3 s), not held until the 30 s idle timeout.
        #expect(slow.readToEnd() == "")
        let quick = try RawConnection(collector)
        quick.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(quick.readToEnd()?.hasPrefix("HTTP/1.1 200") == true)
    }

    @Test func aBodyTrickledInClosesTheConnection() throws {
        let collector = try startCollector {
            $0.headerDeadline = 0.3
            $0.minimumBodyRate = 1000
        }
        defer { collector.stop() }
        let head =
            "POST /track HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Cohorly-Token: t1\r\n"
        let slow = try RawConnection(collector)
        slow.write(head + "Content-Length: 100000\r\n\r\n{")
        // One byte of the body in 0.3 s: closed, not held until the 30 s idle timeout.
        #expect(slow.readToEnd() == "")
        // A handler slower than the deadline (an injected 0.6 s delay) is not cut: only the body's pace counts.
        collector.injectFault(Fault(delay: 0.6))
        let body = #"{"event":"e","properties":{"distinct_id":"u"}}"#
        let held = try RawConnection(collector)
        held.write(head + "Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        let answer = held.readToEnd()
        #expect(answer?.hasPrefix("HTTP/1.1 200") == true, "\(answer ?? "nil")")
        #expect(try collector.store.eventCount() == 1)
    }

    @Test func oneClientCannotHoldEveryConnection() async throws {
        let collector = try startCollector {
            $0.connectionsPerClient = 4
            $0.headerDeadline = 60
        }
        defer { collector.stop() }
        // Four connections from one address reading request bodies (the server is busy with them).
        let head =
            "POST /track HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Cohorly-Token: t1\r\n"
        let busy = try (0..<4).map { _ in try RawConnection(collector) }
        for connection in busy { connection.write(head + "Content-Length: 100000\r\n\r\n{") }
        #expect(await eventually { collector.openConnections == 4 && collector.connectionsWaitingForHeaders == 0 })
        // The same client's fifth connection is closed at once: none of its four only holds a slot…
        let fifth = try RawConnection(collector)
        fifth.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(fifth.readToEnd() == "")
        // …while another client is served.
        let other = try RawConnection(collector, from: "127.0.0.2")
        other.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(other.readToEnd()?.hasPrefix("HTTP/1.1 200") == true)
        withExtendedLifetime(busy) {}
    }

    /// Every local client is 127.0.0.1: connections that only hold slots there (trickling headers, or kept alive
    /// and idle) give way, oldest first, to a connection sending a whole request.
    @Test func connectionsOnlyHoldingSlotsGiveWayToWholeRequestsFromTheSameAddress() throws {
        let collector = try startCollector { $0.headerDeadline = 60 }
        defer { collector.stop() }
        #expect(collector.configuration.connectionsPerClient == 32)
        var held: [RawConnection] = []
        for _ in 0..<64 {
            let trickling = try RawConnection(collector)
            trickling.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
            held.append(trickling)
        }
        for index in 0..<32 {
            let idle = try RawConnection(collector)
            idle.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let answer = idle.readToEnd()
            #expect(answer?.hasPrefix("HTTP/1.1 200") == true, "kept-alive \(index): \(answer ?? "nil")")
            held.append(idle)
        }
        var answered = 0
        for _ in 0..<30 {
            let fresh = try RawConnection(collector)
            fresh.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            if fresh.readToEnd()?.hasPrefix("HTTP/1.1 200") == true { answered += 1 }
        }
        #expect(answered == 30)
        // The oldest held connection was shut down to make room.
        #expect(held[0].readToEnd() == "")
        #expect(collector.openConnections <= 32)
        withExtendedLifetime(held) {}
    }
}
