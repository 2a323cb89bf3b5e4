import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// Numbers from the network or the command line are range-checked: a 400 (or a usage error) with a message,
/// never a trap that kills the collector.
@Suite struct TrapTests {
    @Test func everyNumericQueryParameterIsRangeChecked() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let routes = ["/api/events", "/api/crashes", "/api/engage", "/api/aliases"]
        for route in routes {
            for bad in ["limit=-1", "limit=abc", "limit=99999999999999999999", "limit=100001", "after=-5", "after=1e3"]
            {
                let reply = send(collector, "GET", "\(route)?\(bad)", headers: [])
                #expect(reply.status == 400, "\(route)?\(bad): \(reply.text)")
                let name = String(bad.prefix { $0 != "=" })
                #expect(reply.body?["error"]?.stringValue?.contains("invalid \(name)") == true, "\(reply.text)")
            }
            #expect(send(collector, "GET", "\(route)?limit=0", headers: []).status == 200)
        }
        #expect(send(collector, "GET", "/health", headers: []).status == 200)
    }

    @Test func engageAndAliasesHonourLimitAndAfter() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        for index in 0..<3 {
            #expect(send(collector, "/engage", body: #"{"distinct_id":"u\#(index)","$set":{"a":1}}"#).status == 200)
        }
        let first = send(collector, "GET", "/api/engage?limit=2", headers: [])
        #expect(first.body?["count"] == 2)
        let ids = first.body?["records"]?.arrayValue?.compactMap { $0["distinct_id"]?.stringValue }
        #expect(ids == ["u0", "u1"])
        let rest = send(collector, "GET", "/api/engage?after=2", headers: [])
        #expect(rest.body?["records"]?.arrayValue?.compactMap { $0["distinct_id"]?.stringValue } == ["u2"])
    }

    @Test func adminFaultsRefuseOutOfRangeCountsAndStatuses() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        for body in [
            #"{"count":1000000000000000000,"status":503}"#, #"{"count":-1,"status":503}"#, #"{"count":0}"#,
            #"{"count":1e300}"#, #"{"status":-1}"#, #"{"status":70000}"#, #"{"status":99}"#,
            #"{"status":1e19}"#, #"{"delay_ms":1e300}"#, #"{"delay_ms":-5}"#, #"{"count":"many"}"#,
            #"{"retry_after":"1\r\nX-Evil: 1"}"#,
        ] {
            let reply = send(collector, "/admin/faults", body: body, headers: [])
            #expect(reply.status == 400, "\(body): \(reply.text)")
        }
        #expect(send(collector, "GET", "/admin/faults", headers: []).body?["faults"]?.arrayValue?.count == 0)
        // The pending queue is bounded too: 10,000 at most, however it is asked for.
        #expect(
            send(collector, "/admin/faults", body: #"{"count":10000,"path":"/nowhere"}"#, headers: []).status == 200)
        let over = send(collector, "/admin/faults", body: #"{"count":1,"path":"/nowhere"}"#, headers: [])
        #expect(over.status == 400)
        #expect(over.body?["error"]?.stringValue?.contains("too many pending faults") == true)
        collector.injectFault(Fault(status: 503), count: Int.max)
        #expect(send(collector, "/track", body: event()).status == 200)
    }

    @Test func rateLimitsOutOfRangeAreRefusedWhenParsed() {
        for bad in ["1/inf", "1/1e19", "1e19/1", "0/10", "1/0", "1/-1", "1/nan", "-1/10", "1/", "/1", "1/2/3"] {
            #expect(CollectorConfiguration.RateLimit(bad) == nil, "\(bad)")
        }
        #expect(CollectorConfiguration.RateLimit("1000000/86400") != nil)
    }

    @Test func aRateLimitBuiltInCodeWithAnEndlessWindowStillAnswers() throws {
        let collector = try startCollector { $0.rateLimit = .init(requests: 1, window: .infinity) }
        defer { collector.stop() }
        #expect(send(collector, "/track", body: event()).status == 200)
        let limited = send(collector, "/track", body: event())
        #expect(limited.status == 429)
        #expect(limited.retryAfter.map { $0 > 0 } == true)
    }

    @Test func theCommandLineRefusesOutOfRangeNumbers() async throws {
        let rate = try await CLITests.run(["serve", "--port", "0", "--rate-limit", "1/inf"])
        #expect(rate.status == 2)
        #expect(rate.error.contains("invalid --rate-limit 1/inf"))
        #expect(try await CLITests.run(["serve", "--port", "0", "--rate-limit", "1e19/1"]).status == 2)
        for command in [["crashes", "list"], ["events", "list"]] {
            for bad in ["-1", "1e3", "100001", "99999999999999999999"] {
                let result = try await CLITests.run(command + ["--host", "http://127.0.0.1:1", "--limit", bad])
                #expect(result.status == 2, "\(command) --limit \(bad): \(result.error)")
                #expect(result.error.contains("invalid --limit"))
            }
        }
    }
}
