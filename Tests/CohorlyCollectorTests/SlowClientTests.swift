import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Slow clients cannot starve the server: every request on a kept-alive connection has the header deadline, and
/// at the connection cap a client sending whole requests still gets answered.
@Suite struct SlowClientTests {
    typealias RawConnection = HeldConnectionTests.RawConnection

    @Test func theSecondRequestOnAKeptAliveConnectionHasTheHeaderDeadlineToo() throws {
        let collector = try startCollector { $0.headerDeadline = 0.3 }
        defer { collector.stop() }
        let connection = try RawConnection(collector)
        connection.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let first = connection.readToEnd()
        #expect(first?.hasPrefix("HTTP/1.1 200") == true, "\(first ?? "nil")")
        // The second request's headers are trickled: a byte every 100 ms, for up to 3 s.
        let start = Date()
        var closed = false
        for byte in Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".utf8) {
            var buffer = [UInt8](repeating: 0, count: 256)
            connection.write([byte])
            // The body of the first answer may still be unread: drain it; 0 means the server closed.
            var poller = pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 100) > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(connection.fd, $0.baseAddress, $0.count, 0) }
                if count <= 0 {
                    closed = true
                    break
                }
            }
        }
        #expect(closed, "a trickled second request was held \(Date().timeIntervalSince(start)) s")
    }

    /// At the cap, slow connections from many addresses give way to a client sending whole requests.
    @Test func atTheCapAClientSendingWholeRequestsIsStillAnswered() async throws {
        let collector = try startCollector {
            $0.maxConnections = 12
            $0.headerDeadline = 60
        }
        defer { collector.stop() }
        // 24 connections trickling headers from 6 addresses: twice the cap.
        var slow: [RawConnection] = []
        for index in 0..<24 {
            let connection = try RawConnection(collector, from: "127.0.0.\(2 + index % 6)")
            connection.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
            slow.append(connection)
        }
        #expect(await eventually { collector.openConnections <= 12 })
        for round in 0..<5 {
            let client = try RawConnection(collector, from: "127.0.0.1")
            client.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            let answer = client.readToEnd()
            #expect(answer?.hasPrefix("HTTP/1.1 200") == true, "round \(round): \(answer ?? "nil")")
        }
        #expect(collector.openConnections <= 12 + 1)
        withExtendedLifetime(slow) {}
    }
}
