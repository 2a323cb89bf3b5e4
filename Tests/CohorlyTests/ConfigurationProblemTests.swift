import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry
@testable import CohorlyPostHog

/// A misconfigured client is not silent and loses nothing: a 404 from the configured ingestion path, a refused
/// key (a Sentry DSN's too) or a collector that cannot be reached keeps the events (bounded by the queue),
/// `flush()` returns false, and one line per launch says — without `debug` — which URL answered what and the likely
/// fix. A host string is checked when the client is made.
struct ConfigurationProblemTests {
    /// A client of `url` (not in debug mode) whose log lines go to `recorder`.
    static func client(_ url: URL, token: String = "test-token", recorder: Recorder) -> Cohorly {
        var options = testOptions(temporaryDirectory(), recorder: recorder)
        options.debug = false
        return Cohorly(apiHost: url, token: token, options: options)
    }

    @Test func aHostWithAPathThatAnswers404KeepsTheEventsAndSaysOnceWhatToFix() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = Self.client(collector.baseURL.appendingPathComponent("v1"), recorder: recorder)
        defer { client.shutdown() }
        client.track("Mistyped", properties: ["n": 1])
        #expect(await client.flush() == false)
        client.track("Mistyped", properties: ["n": 2])
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 2)  // kept, not dropped
        #expect(try collector.store.eventCount() == 0)
        let root = collector.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        #expect(recorder.lines.count == 1, "\(recorder.lines)")  // once per launch, without debug
        let line = try #require(recorder.lines.first)
        #expect(line.contains("POST \(root)/v1/track answered 404"), "\(line)")
        #expect(line.contains("use \(root)"), "\(line)")
        #expect(line.contains("flush() returns false"), "\(line)")
    }

    @Test func aCollectorsAdminAPIAnswering401IsNamedForWhatTheServerSaid() async throws {
        let collector = try startCollector { $0.adminToken = "admin-secret" }
        defer { collector.stop() }
        let recorder = Recorder()
        let client = Self.client(collector.baseURL.appendingPathComponent("api"), recorder: recorder)
        defer { client.shutdown() }
        client.track("WrongPath")
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        let line = try #require(recorder.lines.first, "\(recorder.lines)")
        #expect(line.contains("answered 401 (the server said: \"missing or wrong credential"), "\(line)")
        #expect(line.contains("/api is the collector's admin API"), "\(line)")
        #expect(!line.contains("token was refused"), "\(line)")
    }

    @Test func aRefusedTokenKeepsTheEventsAndSaysSoWithoutDebug() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = Self.client(collector.baseURL, token: "wrong-token", recorder: recorder)
        defer { client.shutdown() }
        client.track("Refused")
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        #expect(recorder.lines.first?.contains("the project token was refused") == true, "\(recorder.lines)")
        #expect(!recorder.lines.contains { $0.contains("wrong-token") })
    }

    @Test func aWrongPostHogKeyKeepsTheEventsAndSaysSo() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        mock.then(.status(401, error: "invalid_api_key"), .status(401, error: "invalid_api_key"))
        let recorder = Recorder()
        let client = try makePostHogClient(mock, recorder: recorder, options: { $0.debug = false })
        defer { client.shutdown() }
        client.track("Refused")
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        #expect(mock.requests.count == 1)  // not retried within the flush
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        let line = try #require(recorder.lines.first)
        #expect(line.contains("answered 401 (the server said: \"invalid_api_key\")"), "\(line)")
        #expect(line.contains("project API key was refused"), "\(line)")
    }

    @Test(arguments: [401, 403])
    func aRefusedSentryKeyKeepsTheCrashAndSaysOnceWhatToFixWithoutTheKey(status: Int) async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        // Bugsink's refusal quotes the DSN it was sent, key included.
        let reason = #"{"detail":"Project not found or key incorrect: http://\#(mock.publicKey)@127.0.0.1/42"}"#
        mock.then(.status(status, body: reason), .status(status, body: reason))
        let recorder = Recorder()
        let client = try makeSentryClient(
            mock, recorder: recorder, { $0.sessions = false }, options: { $0.debug = false })
        defer { client.shutdown() }
        _ = try client.enqueuePrepared(SentryRecords.crash())
        #expect(await client.flush() == false)
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)  // kept, not dropped
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        let line = try #require(recorder.lines.first)
        #expect(line.contains("POST http://127.0.0.1:\(mock.port)/api/42/envelope/ answered \(status)"), "\(line)")
        #expect(line.contains("Project not found or key incorrect"), "\(line)")
        #expect(line.contains("check the DSN's key and project id"), "\(line)")
        #expect(line.contains("flush() returns false"), "\(line)")
        #expect(!line.contains(mock.publicKey), "\(line)")
        // Once the server takes it (the DSN fixed), the crash goes.
        #expect(await client.flush())
        #expect(mock.storedEvents.count == 1)
        #expect(client.queuedCount == 0)
    }

    @Test func theCollectorRefusingASentryKeyIsSaidOnce() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        var options = testOptions(temporaryDirectory(), recorder: recorder)
        options.debug = false
        let sentry = try SentryConfiguration(dsn: "http://wrong-key@127.0.0.1:\(collector.baseURL.port ?? 0)/1")
        let client = Cohorly(sentry: sentry, options: options)
        defer { client.shutdown() }
        _ = try client.enqueuePrepared(SentryRecords.crash())
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 2)  // the crash and the launch's session
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        let line = try #require(recorder.lines.first)
        #expect(line.contains("answered 403 (the server said: \"unknown sentry_key\")"), "\(line)")
        #expect(!line.contains("wrong-key"), "\(line)")
    }

    @Test func aCollectorThatCannotBeReachedIsSaidOnce() async throws {
        let collector = try startCollector()
        let url = collector.baseURL
        collector.stop()  // nothing listens there now
        let recorder = Recorder()
        let client = Self.client(url, recorder: recorder)
        defer { client.shutdown() }
        client.track("Unheard")
        #expect(await client.flush() == false)
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        let line = try #require(recorder.lines.first)
        let root = url.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        #expect(line.contains("POST \(root)/track failed"), "\(line)")
        #expect(line.contains("cohorly serve"), "\(line)")
        #expect(line.contains("COHORLY_HOST"), "\(line)")
    }

    @Test func httpsAgainstAPlainHTTPServerSaysSoOnce() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        var components = try #require(URLComponents(url: collector.baseURL, resolvingAgainstBaseURL: false))
        components.scheme = "https"
        let client = Self.client(try #require(components.url), recorder: recorder)
        defer { client.shutdown() }
        client.track("TLS")
        #expect(await client.flush() == false)
        #expect(client.queuedCount == 1)
        #expect(recorder.lines.count == 1, "\(recorder.lines)")
        #expect(recorder.lines.first?.contains("use http:// in the host") == true, "\(recorder.lines)")
    }

    @Test func aHostStringIsCheckedWhenTheClientIsMade() throws {
        #expect(throws: CohorlyHostError.hostWithoutScheme("127.0.0.1:4000")) {
            try Cohorly.validatedHost("127.0.0.1:4000")
        }
        #expect(throws: CohorlyHostError.unsupportedScheme("htp://127.0.0.1:4000")) {
            try Cohorly.validatedHost("htp://127.0.0.1:4000")
        }
        #expect(try Cohorly.validatedHost(" http://127.0.0.1:4000 ").absoluteString == "http://127.0.0.1:4000")
        // A URL the client cannot send to, given as a URL: said at once, on the log handler (or stderr).
        let recorder = Recorder()
        var options = testOptions(temporaryDirectory(), recorder: recorder)
        options.debug = false
        let client = Cohorly(apiHost: URL(fileURLWithPath: "/tmp/not-a-host"), token: "t", options: options)
        client.shutdown()
        #expect(
            recorder.lines.contains {
                $0.contains("must start with http:// or https://") && $0.contains("file:///tmp")
            },
            "\(recorder.lines)")
    }
}
