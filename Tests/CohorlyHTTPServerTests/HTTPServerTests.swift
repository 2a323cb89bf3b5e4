import Foundation
import CohorlyJSON
import Testing

@testable import CohorlyHTTPServer

/// The HTTP/1.1 server over loopback, driven byte by byte through raw sockets: what the handler is given, the
/// body limit, header limits, kept-alive connections, the per-connection deadlines and many clients at once.
@Suite struct HTTPServerTests {
    /// A started server (bodies up to `maxBodyBytes`) whose handler records each request and echoes its body,
    /// answering 413 to one over the limit.
    static func echoServer(
        maxBodyBytes: Int = 1 << 20, memoryLimit: Int = 64 << 10, headerDeadline: Double = 0,
        minimumBodyRate: Double = 0, seen: SeenRequests = SeenRequests(),
        screener: HTTPServer.Screener? = nil, streamer: HTTPServer.Streamer? = nil
    ) throws -> HTTPServer {
        let server = HTTPServer(maxBodyBytes: maxBodyBytes, screener: screener, streamer: streamer) { request in
            seen.append(request)
            if request.path == "/drop" { return nil }
            if request.bodyTooLarge { return .error(413, "body over \(maxBodyBytes) bytes") }
            return HTTPResponse(
                status: 201, headers: [("Content-Type", "text/plain"), ("X-Body-Count", "\(request.body.count)")],
                body: request.body)
        }
        _ = try server.start(
            address: "127.0.0.1", port: 0, memoryLimit: memoryLimit, timeout: 10, perClient: 0,
            headerDeadline: headerDeadline, minimumBodyRate: minimumBodyRate)
        return server
    }

    @Test func theHandlerIsGivenTheRequestAsSent() throws {
        let seen = SeenRequests()
        let server = try Self.echoServer(seen: seen)
        defer { server.stop() }
        #expect(server.port != 0)
        let connection = try LoopbackConnection(port: server.port)
        connection.write(
            "PUT /a/b%20c?x=1&y=two%20words&empty= HTTP/1.1\r\nHost: h\r\nX-Mixed-Case: Value: with colon\r\n"
                + "Content-Length: 5\r\n\r\nhello")
        let response = try #require(connection.readResponse())
        #expect(response.status == 201)
        #expect(response.text == "hello")
        #expect(response.headers["x-body-count"] == "5")
        #expect(response.headers["content-type"] == "text/plain")
        let request = try #require(seen.all.first)
        #expect(request.method == "PUT")
        #expect(request.path == "/a/b c")
        #expect(request.query == ["x": "1", "y": "two words", "empty": ""])
        #expect(request.header("X-MIXED-CASE") == "Value: with colon")
        #expect(request.headers["x-mixed-case"] == "Value: with colon")
        #expect(request.body == Array("hello".utf8))
        #expect(!request.bodyTooLarge)
        #expect(request.clientAddress == "127.0.0.1")
    }

    @Test func aBodyAtTheLimitIsKeptAndOneByteMoreIsDiscardedButStillAnswered() throws {
        let seen = SeenRequests()
        let server = try Self.echoServer(maxBodyBytes: 1000, seen: seen)
        defer { server.stop() }
        let connection = try LoopbackConnection(port: server.port)
        let atLimit = [UInt8](repeating: 0x61, count: 1000)
        connection.write("POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n")
        connection.write(atLimit)
        let kept = try #require(connection.readResponse())
        #expect(kept.status == 201)
        #expect(kept.body == atLimit)
        // One byte over: the whole body is read (the client gets its answer) but not kept.
        connection.write("POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 1001\r\n\r\n")
        connection.write(atLimit + [0x62])
        let refused = try #require(connection.readResponse())
        #expect(refused.status == 413)
        #expect(seen.all.count == 2)
        #expect(seen.all.last?.bodyTooLarge == true)
        #expect(seen.all.last?.body == [])
        // The same over chunked transfer encoding, which announces no length.
        connection.write("POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n")
        connection.write("3e8\r\n" + String(repeating: "a", count: 1000) + "\r\n1\r\nb\r\n0\r\n\r\n")
        #expect(connection.readResponse()?.status == 413)
        connection.write("POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(connection.readResponse()?.text == "hello")
    }

    @Test func headersPastTheConnectionMemoryLimitAreRefusedWithoutCallingTheHandler() throws {
        let seen = SeenRequests()
        let server = try Self.echoServer(memoryLimit: 8 << 10, seen: seen)
        defer { server.stop() }
        let connection = try LoopbackConnection(port: server.port)
        connection.write(
            "GET / HTTP/1.1\r\nHost: h\r\nX-Big: \(String(repeating: "b", count: 16 << 10))\r\n\r\n")
        let answer = try #require(connection.readToEnd())
        // libmicrohttpd answers 431 (older releases 413) and closes.
        #expect(answer.hasPrefix("HTTP/1.1 431") || answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(40))")
        #expect(seen.all.isEmpty)
        // Headers under the limit still work.
        let small = try LoopbackConnection(port: server.port)
        small.write("GET / HTTP/1.1\r\nHost: h\r\nX-Big: \(String(repeating: "b", count: 2 << 10))\r\n\r\n")
        #expect(small.readResponse()?.status == 201)
    }

    @Test func aKeptAliveConnectionServesRequestsInOrderAndPipelined() throws {
        let seen = SeenRequests()
        let server = try Self.echoServer(seen: seen)
        defer { server.stop() }
        let connection = try LoopbackConnection(port: server.port)
        for index in 0..<3 {
            connection.write("POST /\(index) HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\n\(index)")
            let response = try #require(connection.readResponse())
            #expect(response.text == "\(index)")
            #expect(response.headers["connection"]?.lowercased() != "close")
        }
        // Two requests in one write: answered in order on the same connection.
        connection.write(
            "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\naaPOST /b HTTP/1.1\r\nHost: h\r\n"
                + "Content-Length: 1\r\nConnection: close\r\n\r\nb")
        #expect(connection.readResponse()?.text == "aa")
        #expect(connection.readResponse()?.text == "b")
        #expect(connection.readToEnd() == "")  // closed after the answer, as asked
        #expect(seen.all.map(\.path) == ["/0", "/1", "/2", "/a", "/b"])
    }

    @Test func contentLengthBoundsTheBodyAndAShortBodyIsNeverHandled() throws {
        let seen = SeenRequests()
        let server = try Self.echoServer(seen: seen)
        defer { server.stop() }
        // Bytes past Content-Length are not this request's body.
        let long = try LoopbackConnection(port: server.port)
        long.write("POST /long HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcdef")
        #expect(long.readResponse()?.text == "abc")
        // A body that ends before Content-Length is never handed to the handler.
        let short = try LoopbackConnection(port: server.port)
        short.write("POST /short HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc")
        short.finishWriting()
        #expect(short.readToEnd() == "")
        // An unparsable Content-Length is a bad request.
        let bad = try LoopbackConnection(port: server.port)
        bad.write("POST /bad HTTP/1.1\r\nHost: h\r\nContent-Length: x1\r\n\r\nabc")
        #expect(bad.readResponse()?.status == 400)
        let check = try LoopbackConnection(port: server.port)
        check.write("GET /check HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
        #expect(check.readResponse()?.status == 201)
        #expect(!seen.all.map(\.path).contains("/short"))
        #expect(!seen.all.map(\.path).contains("/bad"))
        #expect(seen.all.first { $0.path == "/long" }?.body == Array("abc".utf8))
    }

    @Test func aHandlerAnsweringNilDropsTheConnectionWithoutAnAnswer() throws {
        let server = try Self.echoServer()
        defer { server.stop() }
        let connection = try LoopbackConnection(port: server.port)
        connection.write("GET /drop HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(connection.readToEnd() == "")
    }

    @Test func headersSlowerThanTheDeadlineCloseTheConnection() throws {
        let server = try Self.echoServer(headerDeadline: 0.2)
        defer { server.stop() }
        let slow = try LoopbackConnection(port: server.port)
        slow.write("GET / HTTP/1.1\r\nHost: h\r\nX-Slow: a")
        // Closed by the deadline, not held for the 10 s idle timeout (the read gives up after 5 s).
        #expect(slow.readToEnd() == "")
        // A kept-alive connection owes its next request's headers within the deadline too.
        let idle = try LoopbackConnection(port: server.port)
        idle.write("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(idle.readResponse()?.status == 201)
        #expect(idle.readToEnd() == "")
    }

    @Test func aBodyTrickledUnderTheMinimumRateClosesTheConnection() throws {
        let seen = SeenRequests()
        let server = try Self.echoServer(headerDeadline: 0.2, minimumBodyRate: 1_048_576, seen: seen)
        defer { server.stop() }
        let slow = try LoopbackConnection(port: server.port)
        slow.write("POST /slow HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\na")
        #expect(slow.readToEnd() == "")
        #expect(seen.all.isEmpty)
        // A body sent at once is unaffected.
        let quick = try LoopbackConnection(port: server.port)
        quick.write(
            "POST /quick HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\n" + String(repeating: "q", count: 100))
        #expect(quick.readResponse()?.body.count == 100)
    }

    @Test func aRefusalFromTheHeadersIsSentWithoutHandingTheBodyOn() throws {
        let seen = SeenRequests()
        let server = try Self.echoServer(
            seen: seen,
            screener: { request, _ in request.path == "/refused" ? .error(403, "refused") : nil })
        defer { server.stop() }
        // Waiting for 100 Continue: answered at once, the body never sent.
        let waiting = try LoopbackConnection(port: server.port)
        waiting.write("POST /refused HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        let early = try #require(waiting.readResponse())
        #expect(early.status == 403)
        #expect(CohorlyValue(bytes: early.body)?["error"] == "refused")
        // Sending the body anyway: it is read and dropped, then the refusal comes.
        let sending = try LoopbackConnection(port: server.port)
        sending.write("POST /refused HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        #expect(sending.readResponse()?.status == 403)
        #expect(seen.all.isEmpty)
        let allowed = try LoopbackConnection(port: server.port)
        allowed.write("POST /fine HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok")
        #expect(allowed.readResponse()?.text == "ok")
    }

    @Test func aStreamedBodyArrivesInPiecesPastTheBodyLimit() throws {
        final class CountingSink: RequestBodySink {
            var bytes = 0
            var sum = 0
            func append(_ piece: UnsafeRawBufferPointer) -> Bool {
                bytes += piece.count
                sum = piece.reduce(sum) { $0 &+ Int($1) }
                return true
            }
            func finish(_ request: HTTPRequest) -> HTTPResponse? {
                HTTPResponse(status: 200, body: Array("\(bytes) \(sum)".utf8))
            }
        }
        let server = try Self.echoServer(
            maxBodyBytes: 10,
            streamer: { request in
                switch request.path {
                case "/stream": return CountingSink()
                case "/reject": return RejectedUpload(.error(409, "no"))
                case "/drop-upload": return RejectedUpload(nil)
                default: return nil
                }
            })
        defer { server.stop() }
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0) }
        let connection = try LoopbackConnection(port: server.port)
        connection.write("POST /stream HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.count)\r\n\r\n")
        connection.write(body)
        let expected = body.reduce(0) { $0 &+ Int($1) }
        #expect(connection.readResponse()?.text == "\(body.count) \(expected)")
        let rejected = try LoopbackConnection(port: server.port)
        rejected.write("POST /reject HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n")
        #expect(rejected.readResponse()?.status == 409)
        let dropped = try LoopbackConnection(port: server.port)
        dropped.write("POST /drop-upload HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc")
        #expect(dropped.readToEnd() == "")
    }

    @Test func aFileAnswerStreamsTheFilesBytes() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("http-file-\(UUID().uuidString)").path
        let contents = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(contents).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = HTTPServer(maxBodyBytes: 0) { request in
            request.path == "/missing" ? .file(path + ".missing") : .file(path, headers: [("X-Kind", "file")])
        }
        _ = try server.start(address: "127.0.0.1", port: 0, memoryLimit: 64 << 10, timeout: 10, perClient: 0)
        defer { server.stop() }
        let connection = try LoopbackConnection(port: server.port)
        connection.write("GET /file HTTP/1.1\r\nHost: h\r\n\r\n")
        let response = try #require(connection.readResponse())
        #expect(response.body == contents)
        #expect(response.headers["content-type"] == "application/octet-stream")
        #expect(response.headers["x-kind"] == "file")
        // A file that cannot be opened drops the connection.
        connection.write("GET /missing HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(connection.readToEnd() == "")
    }

    @Test func manyClientsAtOnceEachGetTheirOwnAnswer() throws {
        let seen = SeenRequests()
        let server = try Self.echoServer(seen: seen)
        defer { server.stop() }
        let clients = 24
        let answers = Answers(count: clients)
        // The connections are all open (and each has sent half its request) before any request completes.
        let connections = try (0..<clients).map { _ in try LoopbackConnection(port: server.port) }
        for (index, connection) in connections.enumerated() {
            let body = "client \(index) " + String(repeating: "x", count: index * 100)
            connection.write("POST /c\(index) HTTP/1.1\r\nHost: h\r\nContent-Length: \(body.utf8.count)\r\n\r\n")
        }
        DispatchQueue.concurrentPerform(iterations: clients) { index in
            let body = "client \(index) " + String(repeating: "x", count: index * 100)
            connections[index].write(body)
            answers.set(index, connections[index].readResponse()?.text == body)
        }
        #expect(answers.all == Array(repeating: true, count: clients))
        #expect(Set(seen.all.map(\.path)).count == clients)
    }

    @Test func stopClosesTheListenerAndABadAddressIsRefused() throws {
        let server = try Self.echoServer()
        let port = server.port
        server.stop()
        #expect(throws: (any Error).self) { try LoopbackConnection(port: port) }
        let other = HTTPServer(maxBodyBytes: 0) { _ in nil }
        #expect(throws: HTTPServerError.self) {
            try other.start(address: "localhost", port: 0, memoryLimit: 64 << 10, timeout: 1, perClient: 0)
        }
    }

    @Test func theLoopbackPolicyRefusesForeignHostsAndOrigins() throws {
        let server = PlainHTTPServer(maxBodyBytes: 100, policy: LoopbackRequestPolicy(bindAddress: "127.0.0.1")) {
            _ in HTTPResponse(status: 200, body: Array("ok".utf8))
        }
        let port = try server.start(port: 0)
        defer { server.stop() }
        func status(_ headers: String) throws -> Int? {
            let connection = try LoopbackConnection(port: port)
            connection.write("GET / HTTP/1.1\r\n\(headers)Connection: close\r\n\r\n")
            return connection.readResponse()?.status
        }
        #expect(try status("Host: 127.0.0.1:\(port)\r\n") == 200)
        #expect(try status("Host: localhost:\(port)\r\nOrigin: http://localhost:\(port)\r\n") == 200)
        #expect(try status("Host: evil.example:\(port)\r\n") == 421)
        #expect(try status("Host: 127.0.0.1:\(port &+ 1)\r\n") == 421)
        #expect(try status("Host: 127.0.0.1:\(port)\r\nOrigin: http://evil.example\r\n") == 403)
        #expect(try status("Host: 127.0.0.1:\(port)\r\nOrigin: https://127.0.0.1:\(port)\r\n") == 403)
    }
}

/// One flag per client, set from the clients' threads.
final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var flags: [Bool]
    init(count: Int) { flags = Array(repeating: false, count: count) }
    func set(_ index: Int, _ value: Bool) { lock.withLock { flags[index] = value } }
    var all: [Bool] { lock.withLock { flags } }
}
