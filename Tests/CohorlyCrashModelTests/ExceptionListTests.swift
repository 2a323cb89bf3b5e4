import CohorlyCrashModel
import Testing

/// A crash read from an event keeps what its exception list said (`CapturedException.exceptionList`): a missing
/// list told from an empty one, a `cxx` mechanism from `cxx_exception`, every listed exception, by the reader of
/// the parsed event and the one of its bytes alike, and through the model's JSON.
@Suite struct ExceptionListTests {
    static func event(_ list: CohorlyValue?) -> CohorlyValue {
        var properties: [String: CohorlyValue] = ["$insert_id": "e1", "$exception_level": "fatal"]
        properties[CapturedException.exceptionListProperty] = list
        return .object(properties)
    }

    /// Both readers of an event, which must agree.
    static func read(_ properties: CohorlyValue, sourceLocation: SourceLocation = #_sourceLocation)
        -> CapturedException
    {
        let crash = CapturedException(exceptionEvent: properties)
        let streamed = try? CohorlyValue.read(Array(properties.jsonString.utf8)) { reader throws(JSONReadError) in
            try CapturedException.readEvent(&reader)
        }
        if case .listed = crash.exceptionList {
            #expect(streamed?.crash == crash, sourceLocation: sourceLocation)
        }
        return crash
    }

    @Test func missingListIsToldFromEmptyOne() {
        let missing = Self.read(Self.event(nil))
        let empty = Self.read(Self.event([]))
        #expect(missing.exceptionList == .missing)
        #expect(empty.exceptionList == .listed([]))
        #expect(missing.firstListedException == nil && empty.firstListedException == nil)
        // What the model decided from them is the same: it is the list that tells them apart.
        #expect(missing.description == empty.description)
        #expect(
            Self.read(Self.event(["not an object"])).exceptionList
                == .listed([.init(type: nil, value: nil, mechanismType: nil)]))
    }

    @Test func mechanismIsKeptAsSent() {
        for mechanism in ["cxx", "cxx_exception"] {
            let crash = Self.read(
                Self.event([["type": "std::runtime_error", "value": "boom", "mechanism": ["type": .string(mechanism)]]])
            )
            #expect(crash.facts.cxx?.type == "std::runtime_error")
            #expect(crash.description.mechanism == "cxx_exception")
            #expect(crash.firstListedException?.mechanismType == .string(mechanism))
        }
        // A list entry without a type or a mechanism says so; the model decides `signal` for it.
        let bare = Self.read(Self.event([["value": "v"]]))
        #expect(bare.firstListedException == .init(type: nil, value: "v", mechanismType: nil))
        #expect(bare.description.mechanism == "signal")
    }

    @Test func everyListedExceptionIsKept() {
        let crash = Self.read(
            Self.event([
                ["type": "Outer", "value": "wrapped", "mechanism": ["type": "generic"]],
                ["type": "Inner", "value": 7, "mechanism": ["type": "chained", "handled": true]],
            ]))
        #expect(
            crash.exceptionList
                == .listed([
                    .init(type: "Outer", value: "wrapped", mechanismType: "generic"),
                    .init(type: "Inner", value: 7, mechanismType: "chained"),
                ]))
        #expect(crash.description.type == "Outer")
    }

    @Test func listSurvivesTheModelsJSON() {
        for list: CohorlyValue? in [nil, [], [["type": "A", "value": .null, "mechanism": ["type": "cxx"]], 3]] {
            let crash = Self.read(Self.event(list))
            #expect(CapturedException(jsonValue: crash.jsonValue)?.exceptionList == crash.exceptionList)
        }
    }

    @Test func deviceMadeExceptionListsItsRendering() {
        var crash = CapturedException(
            description: CrashDescription(
                type: String(repeating: "T", count: 300), value: "v", mechanism: "cxx_exception", issueName: nil,
                source: "cxx_exception"),
            facts: CrashReason.Facts(), level: "fatal", handled: false)
        crash.hasStack = false
        #expect(crash.exceptionList == .rendered)
        // Its JSON (what a queue holds) has no list of its own.
        #expect(crash.jsonValue["exception_list"] == nil && crash.jsonValue["exception_list_missing"] == nil)
        let entry = crash.eventProperties[CapturedException.exceptionListProperty]?.arrayValue?.first
        #expect(crash.firstListedException?.type == entry?["type"])
        #expect(crash.firstListedException?.value == entry?["value"])
        #expect(crash.firstListedException?.mechanismType == entry?["mechanism"]?["type"])
        #expect(
            CapturedException(exceptionEvent: .object(crash.eventProperties)).firstListedException
                == crash.firstListedException)
    }
}
