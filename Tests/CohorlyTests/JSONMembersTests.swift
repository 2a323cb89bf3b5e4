import Testing

import Cohorly
@testable import CohorlyClient

/// The shallow member scan PostHog's send-time encoding copies properties with.
@Suite struct JSONMembersTests {
    @Test func membersAreFoundWithTheirRawTextWhateverTheyHold() throws {
        let text = #"{ "a":1, "b\"q":"x\\\"}," , "c":{"d":[1,{"e":"]}"}]}, "f":[ ], "g":null,"h":-1.5e3 }"#
        let members = try #require(JSONMembers(Array(text.utf8)))
        #expect(members.members.map(\.key) == ["a", "b\"q", "c", "f", "g", "h"])
        #expect(members.text(try #require(members["b\"q"])) == #""x\\\"},""#)
        #expect(members.value("c") == ["d": [1, ["e": "]}"]]])
        #expect(members.value("h") == -1500.0)
        #expect(members.members.map { members.text($0.keyText) }[1] == #""b\"q""#)
    }

    @Test func malformedObjectsAreRefused() {
        for text in [#"{"a":1"#, #"{"a" 1}"#, #"["a"]"#, #"{"a":"open}"#, #"{"a":1,}"#, ""] {
            #expect(JSONMembers(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(JSONMembers(Array("{}".utf8))?.members.isEmpty == true)
    }
}
