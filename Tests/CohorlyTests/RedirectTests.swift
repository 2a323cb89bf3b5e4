import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// Redirects: same-origin 307/308 only, with body and headers, at most 5 hops; never to another origin.
@Suite struct RedirectTests {
    @Test(arguments: [307, 308])
    func sameOriginRedirectKeepsBodyAndToken(status: Int) async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        collector.injectFault(Fault(status: status, path: "/track", location: "/track?hop=1"))
        collector.injectFault(
            Fault(status: status, path: "/track", location: "\(collector.baseURL.absoluteString)/track?hop=2"))
        for index in 0..<3 { client.track("e", properties: ["n": .int(index)]) }
        #expect(await client.flush() == true)
        // Stored only if the body and the X-Cohorly-Token header survived both hops.
        #expect(try collector.store.eventCount() == 3)
        #expect(collector.appliedFaultCount == 2)
    }

    @Test func moreThanFiveHopsIsAFailure() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        collector.injectFault(Fault(status: 307, location: "/track"), count: 6)
        client.track("e")
        #expect(await client.flush() == false)
        #expect(collector.appliedFaultCount == 6)
        #expect(client.queuedCount == 1)
        #expect(await client.flush() == true)
    }

    @Test(arguments: [301, 302, 303])
    func otherRedirectsAreNotFollowed(status: Int) async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        collector.injectFault(Fault(status: status, location: "/track"))
        client.track("e")
        #expect(await client.flush() == false)
        #expect(collector.appliedFaultCount == 1)
        #expect(try collector.store.eventCount() == 0)
        #expect(client.queuedCount == 1)
    }

    @Test func crossOriginRedirectNeverReceivesTheToken() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        // Another origin (another port) that would accept and store any token.
        let other = try startCollector { $0.tokens = [] }
        defer { other.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        collector.injectFault(Fault(status: 307, location: "\(other.baseURL.absoluteString)/track"))
        client.track("e")
        #expect(await client.flush() == false)
        #expect(try other.store.eventCount() == 0)
        #expect(client.queuedCount == 1)
    }

    @Test func originComparison() {
        func url(_ text: String) -> URL { URL(string: text) ?? URL(fileURLWithPath: "/") }
        #expect(CurlTransport.sameOrigin(url("http://a.example/x"), url("http://A.example:80/y")))
        #expect(CurlTransport.sameOrigin(url("https://a.example/x"), url("https://a.example:443/y")))
        #expect(!CurlTransport.sameOrigin(url("http://a.example/x"), url("https://a.example/x")))
        #expect(!CurlTransport.sameOrigin(url("http://a.example/x"), url("http://a.example:8080/x")))
        #expect(!CurlTransport.sameOrigin(url("http://a.example/x"), url("http://b.example/x")))
    }
}
