import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// An app that switches destinations between launches: the queue holds wire-neutral records, so what was queued for
/// one destination is sent by the next in its own wire, with the same ids.
@Suite struct DestinationSwitchTests {
    @Test func captureItemsLeftQueuedGoToTheCohorlyAPIAsTrackEvents() async throws {
        let mock = try MockPostHog()
        let directory = temporaryDirectory()
        let posthog = try makePostHogClient(mock, directory: directory)
        mock.then(.dropConnection, .dropConnection, .dropConnection, .dropConnection)
        posthog.track("queued for posthog", properties: ["time": 1_796_032_800_000, "k": "v"])
        #expect(await posthog.flush() == false)
        posthog.shutdown()
        let uuid = try #require(mock.requests.first?.uuids.first)
        mock.stop()

        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector, directory: directory)
        defer { client.shutdown() }
        #expect(await client.flush())
        let event = try #require(try collector.store.events().first)
        #expect(event.event == "queued for posthog")
        #expect(event.insertId == uuid)
        #expect(event.time == 1_796_032_800_000)
        #expect(CohorlyValue(json: event.propertiesJSON)?["k"] == "v")
    }

    @Test func trackEventsLeftQueuedGoToPostHogAsCaptureItems() async throws {
        let dead = try startCollector()
        dead.stop()
        let directory = temporaryDirectory()
        let cohorly = makeClient(dead, directory: directory)
        cohorly.track("queued for cohorly", properties: ["k": "v"])
        cohorly.people.set(["plan": "pro"])
        #expect(await cohorly.flush() == false)
        cohorly.shutdown()

        let mock = try MockPostHog()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makePostHogClient(mock, directory: directory, recorder: recorder)
        defer { client.shutdown() }
        #expect(await client.flush())
        let items = mock.requests.flatMap(\.batch)
        #expect(items.compactMap { $0["event"]?.stringValue } == ["queued for cohorly", "$set"])
        #expect(items.first?["properties"]?["k"] == "v")
        #expect(items.first?["properties"]?["$lib"] == nil)
        #expect(items.last?["properties"]?["$set"] == ["plan": "pro"])
    }
}
