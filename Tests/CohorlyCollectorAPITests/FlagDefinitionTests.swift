import CohorlyJSON
import Testing

@testable import CohorlyCollectorAPI

/// A flag definition as the collector stores and serves it and the CLI sends it: its JSON reads back as the same
/// definition, and what cannot be stored is refused with the reason.
@Suite struct FlagDefinitionTests {
    static let full = FlagDefinition(
        key: "checkout-v2", name: "New checkout", active: false,
        variants: [
            .init(key: "control", rolloutPct: 33.3), .init(key: "a", rolloutPct: 33.3, payload: ["price": 9.5]),
            .init(key: "b", rolloutPct: 33.4, payload: "text"),
        ],
        rules: [
            .init(distinctIds: ["user-1", "user-2"], rolloutPct: 100, variant: "b"), .init(rolloutPct: 12.5),
        ])

    @Test func itsJSONReadsBackAsTheSameDefinition() throws {
        for definition in [Self.full, FlagDefinition(key: "simple", payload: ["on": true])] {
            let text = definition.json.jsonString
            let parsed = try #require(CohorlyValue(json: text))
            #expect(try FlagDefinition(json: parsed) == definition)
        }
        // Whole percentages are written as integers, others as they are; the name defaults to the key.
        let json = Self.full.json
        #expect(json["rules"]?.arrayValue?.map { $0["rolloutPct"] } == [.int(100), .double(12.5)])
        #expect(json["localEvaluable"] == true)
        #expect(FlagDefinition(key: "k").json["name"] == "k")
        #expect(FlagDefinition(key: "k").json["payload"] == nil)
    }

    @Test(arguments: [
        (#"{"name":"x"}"#, "key"),
        (#"{"key":"k","active":"yes"}"#, "boolean"),
        (#"{"key":"k","variants":[{"key":"a"}]}"#, "rolloutPct"),
        (#"{"key":"k","variants":[{"rolloutPct":100}]}"#, "variant needs"),
        (#"{"key":"k","rules":[{"rolloutPct":5,"distinctIds":["a",1]}]}"#, "strings"),
        (#"{"key":"k","variants":[{"key":"a","rolloutPct":60},{"key":"b","rolloutPct":30}]}"#, "not 100"),
        (#"{"key":"k","variants":[{"key":"a","rolloutPct":50},{"key":"a","rolloutPct":50}]}"#, "unique"),
        (#"{"key":"k","variants":[{"key":"a","rolloutPct":101},{"key":"b","rolloutPct":-1}]}"#, "0 to 100"),
        (#"{"key":"k","rules":[{"rolloutPct":100.5}]}"#, "rollout must be 0 to 100"),
        (#"{"key":"k","variants":[{"key":"a","rolloutPct":100}],"rules":[{"rolloutPct":1,"variant":"z"}]}"#, "'z'"),
        (#"{"key":"a/b"}"#, "'/'"),
        (#"{"key":"a\tb"}"#, "control"),
        (#"{"key":""}"#, "1 to 200"),
    ])
    func whatCannotBeStoredIsRefusedWithItsReason(_ text: String, _ reason: String) throws {
        let json = try #require(CohorlyValue(json: text))
        do {
            _ = try FlagDefinition(json: json)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test func keysUpTo200CharactersAndSharesSummingTo100AreAccepted() {
        #expect(FlagDefinition(key: String(repeating: "é", count: 200)).problem == nil)
        #expect(FlagDefinition(key: String(repeating: "k", count: 201)).problem != nil)
        let thirds = (0..<3).map { FlagDefinition.Variant(key: "v\($0)", rolloutPct: 100.0 / 3) }
        #expect(FlagDefinition(key: "k", variants: thirds).problem == nil)
        #expect(Self.full.problem == nil)
    }
}
