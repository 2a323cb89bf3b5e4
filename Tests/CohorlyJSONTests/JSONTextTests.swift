import Foundation
import Testing

@testable import CohorlyJSON

/// `CohorlyValue`'s JSON text: what the writer escapes, which numbers round-trip, what the parser refuses, and
/// how it repairs what it cannot keep (lone surrogates, invalid UTF-8).
@Suite struct JSONTextTests {
    @Test func controlCharactersQuotesAndBackslashesAreEscaped() {
        let all = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let text = CohorlyValue.string(all + "\"\\/\u{7F}\u{2028}é").jsonString
        let expected =
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\u0008\\t\\n\\u000b\\u000c\\r\\u000e\\u000f"
            + "\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d"
            + "\\u001e\\u001f\\\"\\\\/\u{7F}\u{2028}é\""
        #expect(text == expected)
        #expect(CohorlyValue(json: text) == .string(all + "\"\\/\u{7F}\u{2028}é"))
        // Keys are escaped the same way.
        #expect(CohorlyValue.object(["a\"\n": 1]).jsonString == "{\"a\\\"\\n\":1}")
    }

    @Test func everyEscapeTheGrammarAllowsIsRead() {
        #expect(CohorlyValue(json: #""\"\\\/\b\f\n\r\t\u0041\u00e9\u20AC""#) == .string("\"\\/\u{8}\u{C}\n\r\tAé€"))
        #expect(CohorlyValue(json: #""\x""#) == nil)
        #expect(CohorlyValue(json: #""\u12""#) == nil)
        #expect(CohorlyValue(json: #""\u12G4""#) == nil)
        #expect(CohorlyValue(json: "\"a\nb\"") == nil)  // a raw control character
        #expect(CohorlyValue(json: "\"open") == nil)
    }

    @Test func surrogatePairsJoinAndLoneSurrogatesBecomeReplacementCharacters() {
        #expect(CohorlyValue(json: #""\ud83d\ude00""#) == .string("😀"))
        #expect(CohorlyValue(json: #""\uD83D\uDE00x""#) == .string("😀x"))
        #expect(CohorlyValue(json: #""\ud800""#) == .string("\u{FFFD}"))
        #expect(CohorlyValue(json: #""\udc00""#) == .string("\u{FFFD}"))
        // The escape after a lone high surrogate is read on its own, not swallowed.
        #expect(CohorlyValue(json: #""\ud800\u0041""#) == .string("\u{FFFD}A"))
        #expect(CohorlyValue(json: #""\ud800\n""#) == .string("\u{FFFD}\n"))
        #expect(CohorlyValue(json: #""\ud800\ud800\udc00""#) == .string("\u{FFFD}\u{10000}"))
    }

    @Test func invalidUTF8IsRepairedNotRefused() {
        // A stray continuation byte, a truncated sequence, an overlong encoding: each becomes U+FFFD.
        #expect(CohorlyValue(bytes: [0x22, 0x61, 0x80, 0x62, 0x22]) == .string("a\u{FFFD}b"))
        #expect(CohorlyValue(bytes: [0x22, 0xE2, 0x82, 0x22]) == .string("\u{FFFD}"))
        #expect(CohorlyValue(bytes: [0x22, 0xC0, 0xAF, 0x22]) == .string("\u{FFFD}\u{FFFD}"))
        // Also on the escaped path.
        #expect(CohorlyValue(bytes: [0x22, 0x5C, 0x6E, 0xFF, 0x22]) == .string("\n\u{FFFD}"))
        // And the repaired text is written back as valid UTF-8.
        let text = CohorlyValue(bytes: [0x5B, 0x22, 0xFF, 0x22, 0x5D])?.jsonString
        #expect(text == "[\"\u{FFFD}\"]")
    }

    @Test func integersKeepEveryBitAndLargerOnesBecomeDoubles() {
        for value in [Int.min, Int.min + 1, -1, 0, 1, Int.max - 1, Int.max] {
            let text = CohorlyValue.int(value).jsonString
            #expect(text == String(value))
            #expect(CohorlyValue(json: text) == .int(value))
        }
        #expect(CohorlyValue(json: "9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(CohorlyValue(json: "-9223372036854775809") == .double(-9_223_372_036_854_775_808))
        #expect(CohorlyValue(json: "-0") == .int(0))
        #expect(CohorlyValue(json: "1E2") == .double(100))
        #expect(CohorlyValue(json: "1e-2") == .double(0.01))
    }

    @Test func doublesRoundTripExactlyAndNonFiniteOnesAreWrittenAsNull() {
        let values: [Double] = [
            0.1, -2.5, 5, 1e-300, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude, 123_456.789,
            1e21,
            -0.0, .pi,
        ]
        for value in values {
            let parsed = CohorlyValue(json: CohorlyValue.double(value).jsonString)
            #expect(parsed == .double(value), "\(value)")
            #expect(parsed?.doubleValue?.bitPattern == value.bitPattern, "\(value)")
        }
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(CohorlyValue.double(value).jsonString == "null")
            #expect(CohorlyValue.array([.double(value)]).jsonString == "[null]")
            var writer = JSONWriter()
            writer.double(value)
            #expect(writer.bytes == Array("null".utf8))
        }
        // A number too large for a Double is refused, not read as infinity.
        #expect(CohorlyValue(json: "1e400") == nil)
        #expect(CohorlyValue(json: "-1e400") == nil)
        #expect(CohorlyValue(json: "1e-400") == .double(0))
    }

    @Test(arguments: ["01", "-01", "1.", ".5", "+1", "1e", "1e+", "-", "0x10", "NaN", "Infinity", "1 2", "--1"])
    func numbersOutsideTheGrammarAreRefused(_ text: String) {
        #expect(CohorlyValue(json: text) == nil)
        #expect(JSONShape.measure(Array(text.utf8)) == nil)
    }

    @Test(arguments: [
        "", " ", "[1,]", "[,1]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{\"a\":1", "[1", "1x", "{} junk", "nul",
        "truex", "[1]]", "'a'",
    ])
    func malformedDocumentsAreRefused(_ text: String) {
        #expect(CohorlyValue(json: text) == nil)
        #expect(CohorlyValue(bytes: Array(text.utf8)) == nil)
        #expect(JSONShape.measure(Array(text.utf8)) == nil)
    }

    @Test func whiteSpaceAroundTokensIsAllowed() {
        let value = CohorlyValue(json: " \t\r\n{ \"a\" : [ 1 , true , null ] , \"b\" : \"c\" } \n")
        #expect(value == ["a": [1, true, nil], "b": "c"])
    }

    @Test func nestingStopsAt512Levels() {
        func nested(_ depth: Int) -> [UInt8] {
            Array(repeating: UInt8(ascii: "["), count: depth) + Array(repeating: UInt8(ascii: "]"), count: depth)
        }
        #expect(CohorlyValue(bytes: nested(512)) != nil)
        #expect(CohorlyValue(bytes: nested(513)) == nil)
        #expect(JSONShape.measure(nested(512)) == JSONShape(values: 512, depth: 512))
        #expect(JSONShape.measure(nested(513)) == nil)
        let objects =
            Array(repeating: Array("{\"a\":".utf8), count: 513).flatMap { $0 } + Array("1".utf8)
            + Array(repeating: UInt8(ascii: "}"), count: 513)
        #expect(CohorlyValue(bytes: objects) == nil)
        #expect(CohorlyValue(bytes: Array(objects.dropFirst(5).dropLast())) != nil)
        // The reader says why.
        #expect(throws: JSONReadError(offset: 512, tooDeep: true)) {
            try CohorlyValue.read(nested(513)) { reader throws(JSONReadError) in try reader.readValue() }
        }
        do throws(JSONReadError) {
            try CohorlyValue.read(nested(513)) { reader throws(JSONReadError) in try reader.skipValue() }
            Issue.record("a document nesting 513 levels was skipped")
        } catch {
            #expect(error.tooDeep)
        }
    }

    @Test func objectsWriteSortedKeysAndTheLastRepeatedKeyWins() {
        let value: CohorlyValue = ["b": 1, "a": ["z": nil, "y": [1.5, "x"]], "": false]
        #expect(value.jsonString == #"{"":false,"a":{"y":[1.5,"x"],"z":null},"b":1}"#)
        #expect(CohorlyValue(json: #"{"a":1,"a":2}"#) == ["a": 2])
        let members = CohorlyValue.members(ofObject: Array(#" {"a":1,"b":[],"a":"x"} "#.utf8)[...])
        #expect(members?.map(\.key) == ["a", "b", "a"])
        #expect(members?.map(\.value) == [1, [], "x"])
        #expect(CohorlyValue.members(ofObject: Array("[1]".utf8)[...]) == nil)
        #expect(CohorlyValue.members(ofObject: Array(#"{"a":1} x"#.utf8)[...]) == nil)
    }

    @Test func shapeCountsValuesAndKeys() {
        #expect(JSONShape.measure(Array("1".utf8)) == JSONShape(values: 1, depth: 0))
        #expect(JSONShape.measure(Array(#"{"a":[1,2,{"b":null}]}"#.utf8)) == JSONShape(values: 8, depth: 3))
    }

    @Test func accessorsSayWhatTheValueHolds() {
        #expect(CohorlyValue.double(3).intValue == 3)
        #expect(CohorlyValue.double(3.5).intValue == nil)
        #expect(CohorlyValue.double(1e300).intValue == nil)
        #expect(CohorlyValue.int(2).doubleValue == 2)
        #expect(CohorlyValue.string("a").intValue == nil)
        #expect((["k": "v"] as CohorlyValue)["k"] == "v")
        #expect(CohorlyValue.array([])["k"] == nil)
        #expect(Double.nan.cohorlyValue == .null)
        #expect(UInt64.max.cohorlyValue == .double(18_446_744_073_709_551_616))
        #expect(UInt64(7).cohorlyValue == .int(7))
    }

    @Test func codableAgreesWithTheParser() throws {
        let text = #"{"a":[1,2.5,"s",true,null,{"b":-9223372036854775808}]}"#
        let decoded = try JSONDecoder().decode(CohorlyValue.self, from: Data(text.utf8))
        #expect(decoded == CohorlyValue(json: text))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let encoded = try encoder.encode(decoded)
        #expect(CohorlyValue(bytes: Array(encoded)) == decoded)
    }
}
