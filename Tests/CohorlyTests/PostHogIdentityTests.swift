import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// Identity, profile, super-property and opt-out calls as PostHog events (docs/posthog.md "How the client's calls
/// map").
@Suite struct PostHogIdentityTests {
    @Test func identifyAliasAndPeopleBecomePostHogEvents() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makePostHogClient(mock, recorder: recorder)
        defer { client.shutdown() }
        let anonymous = client.currentDistinctId
        client.identify("user-1", set: ["plan": "pro"], setOnce: ["first_seen": "today"])
        client.alias("user-1@example.com")
        client.people.set(["seats": 3])
        client.people.setOnce(["source": "ad"])
        client.people.unset(["old"])
        client.people.increment("logins")
        client.people.deleteUser()
        client.track("after")
        #expect(await client.flush())
        let items = mock.requests.flatMap(\.batch)
        #expect(
            items.compactMap { $0["event"]?.stringValue } == [
                "$identify", "$create_alias", "$set", "$set", "$set", "after",
            ])
        #expect(items.allSatisfy { $0["distinct_id"] == "user-1" })
        #expect(items[0]["properties"]?["$anon_distinct_id"] == .string(anonymous))
        #expect(items[0]["properties"]?["$set"] == ["plan": "pro"])
        #expect(items[0]["properties"]?["$set_once"] == ["first_seen": "today"])
        #expect(items[1]["properties"]?["alias"] == "user-1@example.com")
        #expect(items[2]["properties"]?["$set"] == ["seats": 3])
        #expect(items[3]["properties"]?["$set_once"] == ["source": "ad"])
        #expect(items[4]["properties"]?["$unset"] == ["old"])
        #expect(recorder.lines.contains { $0.contains("dropped people.increment: no PostHog equivalent") })
        #expect(recorder.lines.contains { $0.contains("dropped people.deleteUser: no PostHog equivalent") })
        // A second identify switches ids without another $identify.
        client.identify("user-2")
        client.track("later")
        #expect(await client.flush())
        #expect(mock.requests.last?.batch.map { $0["event"] } == ["later"])
        #expect(mock.requests.last?.batch.first?["distinct_id"] == "user-2")
    }

    @Test func optOutSendsNothingAndResetStartsAnonymous() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock)
        defer { client.shutdown() }
        client.optOut()
        client.track("hidden")
        client.identify("someone")
        #expect(await client.flush())
        #expect(mock.requests.isEmpty)
        client.optIn()
        client.reset()
        client.register(["tier": "gold"])
        client.track("visible")
        #expect(await client.flush())
        let item = try #require(mock.requests.first?.batch.first)
        #expect(item["event"] == "visible")
        #expect(item["distinct_id"] == .string(client.currentDistinctId))
        #expect(item["properties"]?["tier"] == "gold")
    }

    @Test func aQueueWrittenForPostHogIsSentToPostHogByTheDetachedSender() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let directory = temporaryDirectory()
        let crashed = try makePostHogClient(mock, directory: directory) { $0.compression = true }
        mock.then(.dropConnection, .dropConnection, .dropConnection, .dropConnection)
        #expect(
            try crashed.enqueuePrepared(
                PreparedEvent(name: "$exception", properties: ["time": 5, "$insert_id": "k", "distinct_id": "u"]))
                == .queued)
        #expect(await crashed.flush() == false)
        crashed.shutdown()
        // The sender knows only the directory, the host and the key (what CohorlyCrash hands it).
        var options = testOptions(directory)
        options.retry.baseDelay = 0.01
        let delivered = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: mock.url, token: "phc_test", timeout: 120, options: options)
        #expect(delivered)
        let last = try #require(mock.requests.last)
        #expect(last.path == "/i/v1/analytics/events")
        #expect(last.header("Content-Encoding") == "gzip")
        #expect(last.header("Authorization") == "Bearer phc_test")
        #expect(last.uuids == mock.requests.first?.uuids)
    }
}
