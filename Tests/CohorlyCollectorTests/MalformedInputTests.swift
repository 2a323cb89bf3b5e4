import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Random and mutated bodies through the real ingestion path: always a 2xx or a 4xx, never a crash.
@Suite struct MalformedInputTests {
    @Test func mutatedBodiesAlwaysGetAClearAnswer() throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["t1"]
        let store = try CollectorStore(directory: nil)
        let ingestion = Ingestion(store: store, configuration: configuration)
        let seed = Array(
            #"[{"event":"a","properties":{"distinct_id":"u","$insert_id":"x\u00e9\ud83d\ude00","time":1.5e3,"n":[1,-2.5e-3,true,null,{"k":"v\n"}]}}]"#
                .utf8)
        var generator = SeededGenerator(seed: 42)
        let alphabet = Array(#"{}[]",:\u0123456789eE+-.tfnlrsaDd "#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF]
        var statuses: [Int: Int] = [:]
        for round in 0..<20_000 {
            var body = seed
            for _ in 0..<(1 + round % 6) {
                let position = Int.random(in: 0...body.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where position < body.count: body.remove(at: position)
                case 1: body.insert(alphabet.randomElement(using: &generator) ?? 0, at: position)
                default:
                    if position < body.count { body[position] = alphabet.randomElement(using: &generator) ?? 0 }
                }
            }
            let request = HTTPRequest(
                method: "POST", path: "/track",
                headers: ["content-type": "application/json", "x-cohorly-token": "t1"], body: body)
            let response = ingestion.handle(.track, request)
            statuses[response.status, default: 0] += 1
            #expect((200..<300).contains(response.status) || (400..<500).contains(response.status))
        }
        #expect(statuses[200, default: 0] > 0)
        #expect(statuses[400, default: 0] > 0)
    }

    @Test func deepAndHugeDocumentsAreRefusedNotOverflowed() {
        #expect(JSONValue(bytes: Array(String(repeating: "[", count: 1_000_000).utf8)) == nil)
        #expect(
            JSONValue(bytes: Array((String(repeating: "[", count: 512) + String(repeating: "]", count: 512)).utf8))
                != nil)
        #expect(
            JSONValue(bytes: Array((String(repeating: "[", count: 513) + String(repeating: "]", count: 513)).utf8))
                == nil)
        #expect(JSONValue(bytes: Array(#"{"a":1e999}"#.utf8)) == nil)
        #expect(JSONValue(bytes: Array(#""\ud800""#.utf8)) == .string("\u{FFFD}"))
        #expect(JSONValue(bytes: Array("99999999999999999999999".utf8))?.doubleValue == 1e23)
    }
}

/// A deterministic generator (SplitMix64), so a failure replays.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
