import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlyPostHogIngestion

/// One event nested too deep can neither get in nor, when stored anyway (an older collector, a direct writer),
/// make a read page unreadable: ingestion and readers agree on `NestingLimit`.
@Suite struct PoisonEventTests {
    /// `{"deep": [[[…0…]]]}` with `levels` arrays.
    static func deep(_ levels: Int) -> CohorlyValue {
        var value: CohorlyValue = 0
        for _ in 0..<levels { value = .array([value]) }
        return value
    }

    @Test func trackRefusesPropertiesNestedPastTheLimitWithTheRecordsReason() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let poison = event("poison", ["deep": Self.deep(509)])
        let reply = send(collector, "/track", body: "[\(event("fine")),\(poison)]")
        #expect(reply.status == 400, "\(reply.text)")
        #expect(reply.text.contains("record 1: properties nest deeper than 100 levels"), "\(reply.text)")
        // At the limit it is taken.
        let atLimit = send(collector, "/track", body: event("deep", ["deep": Self.deep(NestingLimit.stored - 1)]))
        #expect(atLimit.status == 200, "\(atLimit.text)")
    }

    @Test func captureV1DropsOnlyTheEventNestedTooDeep() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let stamp = "2026-12-01T10:00:00.000Z"
        func item(_ uuid: String, _ properties: CohorlyValue) -> CohorlyValue {
            [
                "uuid": .string(uuid), "event": "e", "distinct_id": "u", "timestamp": .string(stamp),
                "properties": properties,
            ]
        }
        let poisonId = "00000000-0000-4000-8000-000000000001"
        let fineId = "00000000-0000-4000-8000-000000000002"
        let body: CohorlyValue = [
            "created_at": .string(stamp),
            "batch": [item(poisonId, ["deep": Self.deep(300)]), item(fineId, ["plan": "pro"])],
        ]
        let reply = send(
            collector, CaptureV1Ingestion.path, body: body.jsonString,
            headers: [
                ("Content-Type", "application/json"), ("Authorization", "Bearer t1"), ("User-Agent", "t/1"),
                ("PostHog-Sdk-Info", "t/1.0"), ("PostHog-Attempt", "1"),
                ("PostHog-Request-Id", "00000000-0000-4000-8000-0000000000ff"), ("PostHog-Request-Timestamp", stamp),
            ])
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.body?["results"]?[poisonId]?["details"]?.stringValue == "properties_too_deep", "\(reply.text)")
        #expect(reply.body?["results"]?[fineId]?["result"]?.stringValue == "ok")
        #expect(try collector.store.eventCount() == 1)
    }

    /// Stored past the limit anyway: every page still parses (with the parser `cohorly events list` uses) and
    /// shows the other records; the deep part reads as a marker.
    @Test func aStoredPoisonEventLeavesEveryPageReadable() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        #expect(send(collector, "/track", body: event("first", insertId: "a")).status == 200)
        let poison = CollectorStore.NewEvent(
            token: "t1", event: "$exception", distinctId: "u", time: 1, insertId: "poison",
            propertiesJSON: CohorlyValue.object(["release": Self.deep(509), "deep": Self.deep(509)]).jsonString)
        #expect(try collector.store.insert(events: [poison], receivedAt: 1) == 1)
        #expect(send(collector, "/track", body: event("last", insertId: "z")).status == 200)
        let events = send(collector, "GET", "/api/events")
        #expect(events.status == 200)
        let names = events.body?["events"]?.arrayValue?.compactMap { $0["event"]?.stringValue }
        #expect(names == ["first", "$exception", "last"], "\(events.text.prefix(300))")
        #expect(events.text.contains("(nested deeper than 110 levels)"))
        let crashes = send(collector, "GET", "/api/crashes")
        #expect(crashes.status == 200)
        #expect(
            crashes.body?["crashes"]?.arrayValue?.first?["insert_id"]?.stringValue == "poison",
            "\(crashes.text.prefix(300))")
    }

    /// `cohorly events list` and `crashes list` still list every record around one stored too deep, or holding
    /// values of unexpected types (a number for its release, an object for its exception type).
    @Test func theCLIListsEveryRecordAroundAPoisonEvent() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let odd = CohorlyValue.object([
            "event": "$exception",
            "properties": [
                "distinct_id": "u", "$insert_id": "odd", "release": 7,
                "$exception_list": [["type": ["nested": true], "value": 3]],
            ],
        ])
        #expect(send(collector, "/track", body: odd.jsonString).status == 200)
        let poison = CollectorStore.NewEvent(
            token: "t1", event: "$exception", distinctId: "u", time: 2, insertId: "poison",
            propertiesJSON: CohorlyValue.object(["release": Self.deep(509)]).jsonString)
        #expect(try collector.store.insert(events: [poison], receivedAt: 2) == 1)
        let events = try await CLITests.run(["events", "list", "--host", host])
        #expect(events.status == 0, "\(events.error)")
        #expect(events.output.contains("poison") && events.output.contains("odd"), "\(events.output)")
        let crashes = try await CLITests.run(["crashes", "list", "--host", host])
        #expect(crashes.status == 0, "\(crashes.error)")
        #expect(crashes.output.contains("poison") && crashes.output.contains("odd"), "\(crashes.output)")
    }
}
