import CohorlyCollector
import CohorlyHTTPServer
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry
@testable import CohorlyPostHog

/// A delivery counts only on the server's own success answer — `{"status":1,"inserted":N}` from the Cohorly API,
/// per-event `results` from PostHog capture V1, `{"status": 1}` from PostHog's `/batch`, `{"id": <event id>}` from
/// a Sentry server — never on a bare `200 {}` from whatever else listens at the address (a squatter on the
/// collector's port). The records stay queued, `flush()` returns false, and it is said once, without `debug`.
@Suite struct SuccessAnswerTests {
    /// A server that answers every request `200` with `body`.
    final class Squatter: @unchecked Sendable {
        let server: PlainHTTPServer
        let url: URL

        init(body: String = "{}") throws {
            server = PlainHTTPServer(maxBodyBytes: 1 << 20) { _ in
                HTTPResponse(status: 200, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
            }
            url = try #require(URL(string: "http://127.0.0.1:\(try server.start(port: 0))"))
        }

        func stop() { server.stop() }
    }

    @Test func aBare200IsNoDeliveryOfTheCohorlyAPI() async throws {
        let squatter = try Squatter()
        defer { squatter.stop() }
        let recorder = Recorder()
        let client = ConfigurationProblemTests.client(squatter.url, recorder: recorder)
        defer { client.shutdown() }
        client.track("Crash-like")
        #expect(await client.flush() == false)
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)  // kept, not deleted
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        let line = try #require(recorder.lines.first)
        #expect(line.contains("POST \(squatter.url.absoluteString)/track answered 200"), "\(line)")
        #expect(line.contains("without the Cohorly API's success answer"), "\(line)")
        #expect(line.contains("flush() returns false"), "\(line)")
    }

    @Test func theCollectorsSuccessAnswerIsADelivery() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = ConfigurationProblemTests.client(collector.baseURL, recorder: recorder)
        defer { client.shutdown() }
        client.track("Fine")
        client.people.set(["plan": "pro"])
        #expect(await client.flush())
        #expect(client.queuedCount == 0)
        #expect(recorder.lines.isEmpty, "\(recorder.lines)")
        #expect(CohorlyDestination.acknowledges(.track, Array(#"{"status":1,"inserted":2}"#.utf8)))
        #expect(!CohorlyDestination.acknowledges(.track, Array(#"{"status":1}"#.utf8)))
        #expect(!CohorlyDestination.acknowledges(.track, Array("{}".utf8)))
        #expect(!CohorlyDestination.acknowledges(.track, []))
        #expect(CohorlyDestination.acknowledges(.engage, Array(#"{"status":0,"applied":1,"refused":[]}"#.utf8)))
        #expect(!CohorlyDestination.acknowledges(.engage, Array(#"{"status":0,"error":"invalid token"}"#.utf8)))
    }

    @Test(arguments: ["{}", "", "<html>ok</html>"])
    func aCaptureV1AnswerWithoutResultsIsKept(body: String) async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.body(body), .body(body))
        let recorder = Recorder()
        let client = try makePostHogClient(
            mock, recorder: recorder, { $0.maxRetries = 1 }, options: { $0.debug = false })
        defer { client.shutdown() }
        client.track("a")
        #expect(await client.flush() == false)
        #expect(mock.requests.count == 2)  // retried as a 5xx is
        #expect(client.queuedCount == 1)
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        #expect(recorder.lines.first?.contains("without PostHog's success answer") == true, "\(recorder.lines)")
        #expect(await client.flush())  // the real answer next
        #expect(client.queuedCount == 0)
    }

    @Test func aLegacyBatchAnswerWithoutStatusOneIsKept() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.body("{}"), .body(#"{"status":0}"#))
        let recorder = Recorder()
        let client = try makePostHogClient(
            mock, recorder: recorder,
            {
                $0.captureEndpoint = .legacyBatch
                $0.maxRetries = 1
            }, options: { $0.debug = false })
        defer { client.shutdown() }
        client.track("a")
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        #expect(recorder.lines.first?.contains(#"({"status": 1})"#) == true, "\(recorder.lines)")
        #expect(await client.flush())
        #expect(mock.requests.last?.path == "/batch")
        #expect(client.queuedCount == 0)
    }

    @Test func aSentryAnswerThatDoesNotNameTheEventIsKept() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makeSentryClient(
            mock, recorder: recorder, { $0.sessions = false }, options: { $0.debug = false })
        defer { client.shutdown() }
        mock.then(.status(200, body: "{}"), .status(200, body: #"{"id":"0123456789abcdef0123456789abcdef"}"#))
        _ = try client.enqueuePrepared(SentryRecords.crash())
        #expect(await client.flush() == false)
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        #expect(recorder.lines.first?.contains("without Sentry's success answer") == true, "\(recorder.lines)")
        #expect(await client.flush())  // 200 {"id": <its id>}
        #expect(client.queuedCount == 0)
        // Bugsink answers an accepted envelope with an empty body; Relay a session-only one with `{}`.
        #expect(SentryDestination.acknowledges([], eventId: "abc"))
        #expect(SentryDestination.acknowledges(Array("{}".utf8), eventId: nil))
        #expect(SentryDestination.acknowledges(Array(#"{"id":"0A-BC"}"#.utf8), eventId: "0abc"))
        #expect(!SentryDestination.acknowledges(Array("OK".utf8), eventId: nil))
    }
}
