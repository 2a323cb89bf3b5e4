import CohorlyCrashModel
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlyPostHogIngestion

/// Every wire decodes an `$exception`'s crash where it arrives (issue 40, "inside, the model"): the Cohorly API's
/// `/track`, capture V1 and the legacy wire (which maps its events as capture V1 does), and Sentry envelopes; the
/// issue grouping files the crash decoded there, with the fingerprint the sender chose.
@Suite struct EdgeDecodingTests {
    static let frames: [JSONValue] = [
        ["instruction_addr": "0x1000", "instruction_addr_kind": "return_address", "in_app": true, "function": "main"],
        ["instruction_addr": "0x1200", "instruction_addr_kind": "pc", "in_app": true, "function": "Shop.pay()"],
    ]

    static let properties: JSONValue = [
        "distinct_id": "user-1", "$insert_id": "a1", "release": "shop@2", "time": 1_796_119_200_000,
        "$exception_level": "fatal", "$exception_fingerprint": "checkout",
        "$exception_list": [
            [
                "type": "Fatal error", "value": "Index out of range", "mechanism": ["type": "swift_fatal"],
                "stacktrace": ["type": "raw", "frames": .array(frames)],
            ]
        ],
    ]

    func expectDecoded(_ event: CollectorStore.NewEvent?, _ wire: String) {
        #expect(event?.crash == CapturedException(receivedEvent: Self.properties), "\(wire)")
        #expect(event?.crash?.subject?.frames.first?.symbols.first?.function == "Shop.pay()", "\(wire)")
        #expect(event?.crash?.description.type == "Fatal error", "\(wire)")
        #expect(event?.fingerprint == "checkout", "\(wire)")
    }

    @Test func eachPostHogShapedWireDecodesTheCrashWhereItArrives() throws {
        let track = Ingestion.event(
            ["event": "$exception", "properties": Self.properties], token: "t", now: 1)
        expectDecoded(track, "/track")
        let item: JSONValue = [
            "event": "$exception", "distinct_id": "user-1", "timestamp": "2026-12-01T10:00:00Z",
            "properties": Self.properties,
        ]
        let v1 = try CaptureV1Ingestion.event(item, uuid: "a1", token: "t", sdk: nil, now: 1).get()
        #expect(v1.crash?.description == CapturedException(exceptionEvent: Self.properties).description)
        #expect(v1.fingerprint == "checkout")
        // Not a crash: nothing decoded.
        let plain = Ingestion.event(["event": "clicked", "properties": ["distinct_id": "u"]], token: "t", now: 1)
        #expect(plain != nil && plain?.crash == nil)
    }

    @Test func theGroupingFilesTheCrashDecodedAtTheEdge() throws {
        let store = try CollectorStore(directory: nil)
        var event = try #require(
            Ingestion.event(["event": "$exception", "properties": Self.properties], token: "t", now: 1))
        // The decoded crash is what is grouped, whatever the properties' text says.
        var crash = try #require(event.crash)
        crash.threads[0].frames[0].symbols[0].function = "Shop.refund()"
        event.crash = crash
        event.fingerprint = nil
        let occurrence = try #require(store.issues.occurrences(for: [event]).first ?? nil)
        #expect(occurrence.key.culprit == "Shop.refund()", "\(occurrence.key)")
        #expect(occurrence.release == "shop@2")
    }
}
