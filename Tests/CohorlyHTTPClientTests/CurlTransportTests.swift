import CohorlyHTTPServer
import Foundation
import Testing

@testable import CohorlyHTTPClient

/// libcurl's transport against loopback `HTTPServer`s: what it sends and returns, the redirect policy (only
/// same-origin 307/308, body and headers kept, at most 5 hops: the token never reaches another origin) and its
/// bounded timeouts.
@Suite struct CurlTransportTests {
    /// Requests a server saw, with its port (handlers run on the servers' threads).
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [HTTPRequest] = []
        private var otherPort: UInt16 = 0
        func append(_ request: HTTPRequest) { lock.withLock { entries.append(request) } }
        var all: [HTTPRequest] { lock.withLock { entries } }
        var other: UInt16 {
            get { lock.withLock { otherPort } }
            set { lock.withLock { otherPort = newValue } }
        }
    }

    /// Two servers (two origins: same host, different ports). Paths: `/echo` answers 200 with the body and the
    /// request's method and headers; `/status/N` answers N; `/to/<status>/<path>` redirects to `/<path>` here, and
    /// `/to/<status>/other/<path>` to the second server; `/loop` redirects to itself; `/localhost/<status>` to
    /// `/echo` here under the name `localhost`; `/wait` holds its answer until `release` is signalled.
    final class Servers: @unchecked Sendable {
        let first = Log()
        let second = Log()
        let release = DispatchSemaphore(value: 0)
        var servers: [HTTPServer] = []
        var port: UInt16 = 0
        var otherPort: UInt16 = 0

        init() throws {
            for log in [first, second] {
                let release = release
                let server = HTTPServer(maxBodyBytes: 1 << 20) { request in
                    log.append(request)
                    return Self.answer(request, otherPort: log.other, release: release)
                }
                _ = try server.start(address: "127.0.0.1", port: 0, memoryLimit: 64 << 10, timeout: 10, perClient: 0)
                servers.append(server)
            }
            port = servers[0].port
            otherPort = servers[1].port
            first.other = otherPort
            second.other = port
        }

        func stop() { for server in servers { server.stop() } }

        func url(_ path: String) -> URL {
            URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
        }

        static func answer(_ request: HTTPRequest, otherPort: UInt16, release: DispatchSemaphore) -> HTTPResponse {
            let parts = request.path.split(separator: "/", maxSplits: 2).map(String.init)
            switch parts.first {
            case "echo":
                var headers: [(String, String)] = [("Content-Type", "text/plain"), ("X-Method", request.method)]
                for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
                    headers.append(("X-Got-\(name)", value))
                }
                return HTTPResponse(status: 200, headers: headers, body: request.body)
            case "status":
                let status = parts.count > 1 ? Int(parts[1]) ?? 500 : 500
                var headers: [(String, String)] = []
                if let retry = request.query["retry"] { headers.append(("Retry-After", retry)) }
                return HTTPResponse(status: status, headers: headers, body: Array("status \(status)".utf8))
            case "to":
                guard parts.count == 3, let status = Int(parts[1]) else { return .error(400, "bad redirect") }
                // `other/<path>`: the second server's origin; anything else: this server's `/<path>`.
                let target =
                    parts[2].hasPrefix("other/")
                    ? "http://127.0.0.1:\(otherPort)/" + parts[2].dropFirst("other/".count) : "/" + parts[2]
                return HTTPResponse(status: status, headers: [("Location", target)], body: [])
            case "loop": return HTTPResponse(status: 307, headers: [("Location", "/loop")], body: [])
            case "localhost":
                let status = parts.count > 1 ? Int(parts[1]) ?? 307 : 307
                let port = request.header("Host")?.split(separator: ":").last.map(String.init) ?? ""
                return HTTPResponse(
                    status: status, headers: [("Location", "http://localhost:\(port)/echo")], body: [])
            case "wait":
                release.wait()
                return HTTPResponse(status: 200, body: [])
            default: return .error(404, "no route")
            }
        }
    }

    static func request(
        _ url: URL, method: String = "POST", body: String = "", timeout: Double = 10,
        headers: [(String, String)] = [("Authorization", "Bearer secret"), ("Content-Type", "application/json")]
    ) -> TransportRequest {
        TransportRequest(
            url: url, method: method, headers: headers, body: Array(body.utf8), timeout: timeout, connectTimeout: 5)
    }

    @Test func sendsTheMethodHeadersAndBodyAndReturnsTheAnswer() throws {
        let servers = try Servers()
        defer { servers.stop() }
        let transport = CurlTransport()
        let (response, headers) = transport.exchange(Self.request(servers.url("/echo"), body: #"{"a":1}"#))
        #expect(response == .http(status: 200, retryAfter: nil, body: Array(#"{"a":1}"#.utf8)))
        #expect(headers["x-method"] == "POST")
        #expect(headers["x-got-authorization"] == "Bearer secret")
        #expect(headers["x-got-content-type"] == "application/json")
        #expect(headers["x-got-expect"] == nil)  // no 100-continue round trip
        #expect(headers["content-type"] == "text/plain")
        let put = transport.exchange(Self.request(servers.url("/echo"), method: "PUT", body: "p"))
        #expect(put.headers["x-method"] == "PUT")
        #expect(put.response == .http(status: 200, retryAfter: nil, body: Array("p".utf8)))
        let get = transport.exchange(Self.request(servers.url("/echo"), method: "GET"))
        #expect(get.headers["x-method"] == "GET")
        let empty = transport.send(Self.request(servers.url("/echo")))
        #expect(empty == .http(status: 200, retryAfter: nil, body: []))
        // The same transport serves many requests (its connections are reused).
        for index in 0..<20 {
            #expect(transport.send(Self.request(servers.url("/echo"), body: "\(index)")).status == 200)
        }
    }

    @Test func errorStatusesAndRetryAfterComeBackAsAnswers() throws {
        let servers = try Servers()
        defer { servers.stop() }
        let transport = CurlTransport()
        #expect(
            transport.send(Self.request(servers.url("/status/503")))
                == .http(status: 503, retryAfter: nil, body: Array("status 503".utf8)))
        #expect(
            transport.send(Self.request(servers.url("/status/429?retry=7")))
                == .http(status: 429, retryAfter: 7, body: Array("status 429".utf8)))
        // The HTTP-date form: a date in the past is no wait at all.
        let past = transport.send(
            Self.request(servers.url("/status/429?retry=Sun,%2006%20Nov%201994%2008:49:37%20GMT")))
        #expect(past == .http(status: 429, retryAfter: 0, body: Array("status 429".utf8)))
        let garbage = transport.send(Self.request(servers.url("/status/429?retry=soon")))
        #expect(garbage == .http(status: 429, retryAfter: nil, body: Array("status 429".utf8)))
    }

    @Test(arguments: [307, 308])
    func aSameOriginRedirectIsFollowedWithItsBodyAndHeaders(_ status: Int) throws {
        let servers = try Servers()
        defer { servers.stop() }
        let transport = CurlTransport()
        let (response, headers) = transport.exchange(
            Self.request(servers.url("/to/\(status)/echo"), method: "PUT", body: "payload"))
        #expect(response == .http(status: 200, retryAfter: nil, body: Array("payload".utf8)))
        #expect(headers["x-method"] == "PUT")
        #expect(headers["x-got-authorization"] == "Bearer secret")
        #expect(servers.first.all.map(\.path) == ["/to/\(status)/echo", "/echo"])
        #expect(servers.first.all.map(\.body) == [Array("payload".utf8), Array("payload".utf8)])
        #expect(servers.second.all.isEmpty)
    }

    @Test(arguments: [307, 308])
    func aRedirectToAnotherOriginIsReturnedNotFollowed(_ status: Int) throws {
        let servers = try Servers()
        defer { servers.stop() }
        let transport = CurlTransport()
        // Another port, and the same port under another host name: both other origins.
        let response = transport.send(Self.request(servers.url("/to/\(status)/other/echo")))
        #expect(response.status == status)
        let byName = transport.send(Self.request(servers.url("/localhost/\(status)")))
        #expect(byName.status == status)
        #expect(servers.second.all.isEmpty)  // the token never reached it
        #expect(servers.first.all.count == 2)
    }

    @Test(arguments: [301, 302, 303])
    func otherRedirectsAreReturnedNotFollowed(_ status: Int) throws {
        let servers = try Servers()
        defer { servers.stop() }
        let response = CurlTransport().send(Self.request(servers.url("/to/\(status)/echo"), body: "b"))
        #expect(response == .http(status: status, retryAfter: nil, body: []))
        #expect(servers.first.all.count == 1)
    }

    @Test func aRedirectLoopStopsAfterFiveHops() throws {
        let servers = try Servers()
        defer { servers.stop() }
        let response = CurlTransport().send(Self.request(servers.url("/loop"), body: "b"))
        #expect(response == .failure("too many redirects"))
        // The first request and five redirects followed.
        #expect(servers.first.all.count == CurlTransport.maxRedirects + 1)
        #expect(servers.first.all.allSatisfy { $0.body == Array("b".utf8) })
    }

    @Test func aServerThatDoesNotAnswerTimesOutWithinTheRequestTimeout() throws {
        let servers = try Servers()
        defer { servers.stop() }
        let started = DispatchTime.now().uptimeNanoseconds
        let response = CurlTransport().send(Self.request(servers.url("/wait"), timeout: 0.3))
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        servers.release.signal()
        guard case .failure(let reason) = response else {
            Issue.record("expected a timeout, got \(response)")
            return
        }
        #expect(reason.lowercased().contains("timeout") || reason.lowercased().contains("timed out"), "\(reason)")
        #expect(elapsed >= 0.2)  // it did wait (libcurl's clock may end it a moment early)
        #expect(elapsed < 5, "a 0.3 s timeout took \(elapsed) s")
    }

    @Test func noListenerIsATransportFailure() throws {
        let servers = try Servers()
        let url = servers.url("/echo")
        servers.stop()
        let response = CurlTransport().send(Self.request(url))
        #expect(response.status == nil)
        if case .failure(let reason) = response { #expect(!reason.isEmpty) }
    }

    @Test func originsCompareSchemeHostAndDefaultPort() throws {
        func same(_ a: String, _ b: String) throws -> Bool {
            CurlTransport.sameOrigin(try #require(URL(string: a)), try #require(URL(string: b)))
        }
        #expect(try same("http://a.example/x", "http://a.example:80/y"))
        #expect(try same("https://A.example/x", "HTTPS://a.EXAMPLE:443/y"))
        #expect(try !same("http://a.example/x", "https://a.example/x"))
        #expect(try !same("http://a.example/x", "http://a.example:8080/x"))
        #expect(try !same("http://a.example/x", "http://b.example/x"))
        #expect(try !same("http://a.example/x", "http://a.example.evil/x"))
    }
}
