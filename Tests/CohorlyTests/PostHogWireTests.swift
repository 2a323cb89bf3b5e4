import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// Capture V1 headers and body (docs/posthog.md "What goes on the wire"), client ⇄ mock PostHog over loopback.
@Suite struct PostHogWireTests {
    /// `yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`: what formatting its own parse gives back.
    static func isCanonicalTime(_ text: String?) -> Bool {
        guard let text, let milliseconds = RFC3339.milliseconds(text) else { return false }
        return RFC3339.format(milliseconds: milliseconds) == text
    }

    /// A lowercase 8-4-4-4-12 UUID.
    static func isUUID(_ text: String?) -> Bool { text != nil && UUIDText.canonical(text ?? "") == text }

    @Test func theSevenHeadersAndTheBodyShape() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock)
        defer { client.shutdown() }
        client.register(["plan": "pro"])
        client.track("Screen Viewed", properties: ["screen": "Home"])
        client.track("Tapped")
        #expect(await client.flush())
        let request = try #require(mock.requests.first)
        #expect(mock.requests.count == 1)
        #expect(request.path == "/i/v1/analytics/events")
        #expect(request.header("Authorization") == "Bearer phc_test")
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.header("PostHog-Sdk-Info") == "cohorly-swift-linux/0.1.0")
        #expect(request.header("User-Agent") == "cohorly-swift-linux/0.1.0")
        #expect(request.header("PostHog-Attempt") == "1")
        #expect(Self.isUUID(request.header("PostHog-Request-Id")))
        #expect(Self.isCanonicalTime(request.header("PostHog-Request-Timestamp")))
        #expect(request.header("Content-Encoding") == nil)
        let body = try #require(request.body?.objectValue)
        #expect(Set(body.keys) == ["created_at", "batch"])  // no api_key, no sent_at, no historical_migration
        #expect(Self.isCanonicalTime(body["created_at"]?.stringValue))
        #expect(request.events == ["Screen Viewed", "Tapped"])
        for item in request.batch {
            let object = try #require(item.objectValue)
            #expect(Set(object.keys) == ["event", "uuid", "distinct_id", "timestamp", "options", "properties"])
            #expect(Self.isUUID(object["uuid"]?.stringValue))
            #expect(object["distinct_id"]?.stringValue == client.currentDistinctId)
            #expect(Self.isCanonicalTime(object["timestamp"]?.stringValue))
            #expect(object["options"] == [:])
            let properties = try #require(object["properties"]?.objectValue)
            #expect(properties["plan"] == "pro")
            #expect(properties["$os"] == "Linux")
            for stripped in ["$lib", "$lib_version", "distinct_id", "time", "$insert_id", "token", "$geoip_disable"] {
                #expect(properties[stripped] == nil, "\(stripped) must not be a property")
            }
        }
        #expect(request.batch.first?["properties"]?["screen"] == "Home")
        #expect(Set(request.uuids).count == 2)
    }

    @Test func optionsSessionIdsGeoIPAndHistoricalMigration() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock) { posthog in
            posthog.disableGeoIP = true
            posthog.historicalMigration = true
        }
        defer { client.shutdown() }
        client.track(
            "e",
            properties: [
                "$process_person_profile": false, "$cookieless_mode": true, "$ignore_sent_at": true,
                "$product_tour_id": "tour", "$session_id": "s-1", "$window_id": "w-1",
            ])
        #expect(await client.flush())
        let request = try #require(mock.requests.first)
        #expect(request.body?["historical_migration"] == true)
        let item = try #require(request.batch.first)
        #expect(
            item["options"]
                == [
                    "process_person_profile": false, "cookieless_mode": true, "disable_skew_correction": true,
                    "product_tour_id": "tour",
                ])
        #expect(item["session_id"] == "s-1")
        #expect(item["window_id"] == "w-1")
        #expect(item["properties"]?["$geoip_disable"] == true)
        #expect(item["properties"]?["$session_id"] == "s-1")
        for moved in ["$process_person_profile", "$cookieless_mode", "$ignore_sent_at", "$product_tour_id"] {
            #expect(item["properties"]?[moved] == nil)
        }
    }

    @Test func timestampsAreCanonicalUTCAndABadOneIsDroppedByName() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makePostHogClient(mock, recorder: recorder)
        defer { client.shutdown() }
        client.track("offset", properties: ["time": "2026-11-30T10:15:30.5+02:00"])
        client.track("millis", properties: ["time": 1_796_033_730_123])
        client.track("garbled", properties: ["time": "yesterday"])
        client.track("after")
        #expect(await client.flush())
        let request = try #require(mock.requests.first)
        #expect(request.events == ["offset", "millis", "after"])
        #expect(request.batch[0]["timestamp"] == "2026-11-30T08:15:30.500Z")
        #expect(request.batch[1]["timestamp"] == "2026-11-30T10:15:30.123Z")
        #expect(
            recorder.lines.contains {
                $0.contains("dropped event \"garbled\"") && $0.contains("\"yesterday\" is not an RFC 3339")
            })
        #expect(client.queuedCount == 0)
    }

    @Test func gzipBodiesCarryContentEncoding() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock) { $0.compression = true }
        defer { client.shutdown() }
        for index in 0..<50 { client.track("compressed", properties: ["n": .int(index), "pad": "xxxxxxxxxxxxxxxx"]) }
        #expect(await client.flush())
        let request = try #require(mock.requests.first)
        #expect(request.header("Content-Encoding") == "gzip")
        #expect(request.batch.count == 50)
        #expect(Int(request.header("Content-Length") ?? "") ?? .max < request.rawBody.count)
    }

    @Test func preparedEventsKeepTheirInsertIdAsUuidAndTheirOwnTime() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let directory = temporaryDirectory()
        let client = try makePostHogClient(mock, directory: directory)
        let insertId = "7C4E8F0A-1B2C-4D3E-8F9A-0B1C2D3E4F5A"
        let crash = PreparedEvent(
            name: "$exception",
            properties: [
                "$insert_id": .string(insertId), "time": 1_764_490_000_123, "distinct_id": "crash-user",
                "$exception_level": "fatal", "$lib": "cohorly-swift-linux", "$lib_version": "0.0.9",
            ])
        #expect(try client.enqueuePrepared(crash) == .queued)
        #expect(try client.enqueuePrepared(crash) == .alreadyQueued)
        let other = PreparedEvent(name: "$exception", properties: ["$insert_id": "not-a-uuid", "time": 5])
        #expect(try client.enqueuePrepared(other) == .queued)
        #expect(await client.flush())
        client.shutdown()
        let items = mock.requests.flatMap(\.batch)
        #expect(items.count == 2)
        #expect(items[0]["uuid"] == .string(insertId.lowercased()))
        #expect(items[0]["distinct_id"] == "crash-user")
        #expect(items[0]["timestamp"] == "2025-11-30T08:06:40.123Z")
        #expect(items[0]["properties"]?["$exception_level"] == "fatal")
        #expect(items[0]["properties"]?["$lib"] == nil)
        // A resend of the same crash (another launch, another client) carries the same uuids.
        let derived = try #require(items[1]["uuid"]?.stringValue)
        #expect(Self.isUUID(derived))
        let again = try makePostHogClient(mock, directory: temporaryDirectory())
        defer { again.shutdown() }
        #expect(try again.enqueuePrepared(crash) == .queued)
        #expect(try again.enqueuePrepared(other) == .queued)
        #expect(await again.flush())
        #expect(mock.requests.last?.uuids == [insertId.lowercased(), derived])
    }

    @Test func badConfigurationIsAClearError() {
        #expect(throws: PostHogConfigurationError.hostWithoutScheme("us.i.posthog.com")) {
            try PostHogConfiguration(host: "us.i.posthog.com", apiKey: "phc_x")
        }
        #expect(throws: PostHogConfigurationError.emptyAPIKey) {
            try PostHogConfiguration(host: "https://us.i.posthog.com", apiKey: " ")
        }
        #expect(throws: PostHogConfigurationError.unsupportedScheme("ftp://example.com")) {
            try PostHogConfiguration(host: "ftp://example.com", apiKey: "phc_x")
        }
        #expect(
            PostHogConfigurationError.hostWithoutScheme("us.i.posthog.com").description
                == "PostHog host \"us.i.posthog.com\" needs a scheme and a host name, e.g. https://us.i.posthog.com")
    }

    @Test func rfc3339ParsesOffsetsAndRejectsGarbage() {
        #expect(RFC3339.milliseconds("1970-01-01T00:00:00Z") == 0)
        #expect(RFC3339.milliseconds("1970-01-01T01:00:00.25+01:00") == 250)
        #expect(RFC3339.milliseconds("2024-02-29t23:59:59.999999z") == 1_709_251_199_999)
        #expect(RFC3339.milliseconds("1969-12-31T23:59:59.000-00:00") == -1000)
        for bad in [
            "", "2024-02-30T00:00:00Z", "2024-01-01T00:00:00", "2024-01-01 00:00Z", "2024-01-01T00:00:00.Z",
            "2024-01-01T24:00:00Z", "2024-01-01T00:00:00+0100", "2024-01-01T00:00:00Zjunk",
        ] {
            #expect(RFC3339.milliseconds(bad) == nil, "\(bad)")
        }
        #expect(RFC3339.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        #expect(RFC3339.format(milliseconds: 1_709_251_199_999) == "2024-02-29T23:59:59.999Z")
    }
}
