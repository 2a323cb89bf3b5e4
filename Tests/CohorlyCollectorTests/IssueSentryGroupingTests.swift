import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Sentry envelopes are grouped like the other wires' events (issue 27 item 1): by type and in-app frames, with
/// the event's `fingerprint` first unless it names Sentry's default grouping.
@Suite struct IssueSentryGroupingTests {
    typealias E = SentryEnvelopes

    func crash(_ eventId: String, fingerprint: CohorlyValue? = nil) -> [UInt8] {
        var event = E.crashEvent(eventId: eventId).objectValue ?? [:]
        event["fingerprint"] = fingerprint
        return E.envelope(["event_id": .string(eventId)], [("event", E.json(.object(event)))])
    }

    @Test func sentryCrashesGroupAndTheirFingerprintWins() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let ids = (1...4).map { String(format: "%08x", $0) + "aaaabbbbccccddddeeeeffff" }
        for (id, fingerprint) in zip(ids, [nil, ["{{ default }}"], ["payment-timeout", 504], nil] as [CohorlyValue?]) {
            let reply = sendBytes(collector, E.path, body: crash(id, fingerprint: fingerprint), headers: E.headers())
            #expect(reply.status == 200, "\(reply.text)")
        }
        let issues = try #require(send(collector, "GET", "/api/issues", headers: []).body?["issues"]?.arrayValue)
        #expect(issues.count == 2, "\(issues)")
        let grouped = try #require(issues.first { $0["occurrences"] == 3 }, "\(issues)")
        #expect(grouped["title"] == "SIGSEGV")
        #expect(grouped["subtitle"] == "Segmentation fault")
        #expect(grouped["level"] == "fatal")
        #expect(grouped["first_release"] == "app@1.0")
        let custom = try #require(issues.first { $0["occurrences"] == 1 }, "\(issues)")
        #expect(custom["fingerprint"] == "payment-timeout\n504")
    }

    @Test func versionsCompareBySemanticVersionPrecedence() {
        let ordered = [
            "0.9.9", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11",
            "1.0.0-rc.1", "1.0.0", "v1.0.1", "1.2", "1.10.0", "2.0.0+build.5",
        ]
        for (earlier, later) in zip(ordered, ordered.dropFirst()) {
            #expect(ReleaseOrder.isLater(later, than: earlier, arrival: { _ in nil }), "\(later) after \(earlier)")
            #expect(!ReleaseOrder.isLater(earlier, than: later, arrival: { _ in nil }), "\(earlier) before \(later)")
        }
        #expect(ReleaseOrder.isLater("app@1.10.0", than: "app@1.9.0", arrival: { _ in nil }))
        #expect(ReleaseVersion("1.2.3.4") == nil)
        #expect(ReleaseVersion("nightly") == nil)
        #expect(ReleaseVersion("1..2") == nil)
        // Not both versions: arrival order decides.
        let rank = ["nightly": Int64(1), "1.0.0": 2]
        #expect(ReleaseOrder.isLater("1.0.0", than: "nightly", arrival: { rank[$0] }))
        #expect(!ReleaseOrder.isLater("nightly", than: "1.0.0", arrival: { rank[$0] }))
    }
}
