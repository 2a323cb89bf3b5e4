import Cohorly
import Testing

@testable import CohorlyCrash

/// The summary a `track` call's properties become in its breadcrumb (written as bytes on the caller's thread).
@Suite struct BreadcrumbSummaryTests {
    static func summary(_ properties: Properties, maxKeys: Int = BreadcrumbRecorder.trackKeys) throws -> Properties {
        let bytes = BreadcrumbRecorder.summary(properties, maxKeys: maxKeys)
        #expect(bytes.count <= Breadcrumb.maxDataBytes)
        let value = try #require(CohorlyValue(json: String(decoding: bytes, as: UTF8.self)))
        return try #require(value.objectValue)
    }

    @Test func theFirstKeysByNameAreKeptAndTheRestCounted() throws {
        var properties: Properties = [:]
        for index in (0..<22).reversed() { properties["k\(index < 10 ? "0" : "")\(index)"] = .int(index) }
        let summary = try Self.summary(properties)
        #expect(summary.keys.sorted() == ["$more_keys"] + (0..<8).map { "k0\($0)" })
        #expect(summary["k03"] == 3 && summary["$more_keys"] == 14)
        #expect(try Self.summary([:]) == [:])
    }

    @Test func valuesAreWrittenAsJSONAndNestedOnesCounted() throws {
        let properties: Properties = [
            "quote": "a\"b\\c\n\r\t\u{01}é", "int": -42, "double": 9.5, "yes": true, "none": nil,
            "list": [1, 2, 3], "map": ["a": 1, "b": 2],
        ]
        let summary = try Self.summary(properties)
        #expect(summary["quote"] == "a\"b\\c\n\r\t\u{01}é")
        #expect(summary["int"] == -42 && summary["double"] == 9.5 && summary["yes"] == true)
        #expect(summary["none"] == .null && summary.keys.contains("none"))
        #expect(summary["list"] == "[3 items]" && summary["map"] == "{2 keys}")
    }

    @Test func longTextsAreCutBetweenCharacters() throws {
        let limit = BreadcrumbRecorder.summaryTextBytes
        let ascii = String(repeating: "a", count: 200)
        let crlf = String(repeating: "a", count: limit - 1) + "\r\n" + "tail"
        let accents = "a" + String(repeating: "é", count: 100)  // é: 2 bytes, the 64th byte is the first of one
        let family = String(repeating: "x", count: limit - 3) + "👨‍👩‍👧"  // one character of 18 bytes across the limit
        let summary = try Self.summary(
            [
                "ascii": .string(ascii), "crlf": .string(crlf), "accents": .string(accents), "family": .string(family),
                String(repeating: "k", count: 100): 1,
            ])
        #expect(summary["ascii"] == .string(String(repeating: "a", count: limit)))
        #expect(summary["crlf"] == .string(String(repeating: "a", count: limit - 1)))
        #expect(summary["accents"] == .string("a" + String(repeating: "é", count: 31)))
        #expect(summary["family"] == .string(String(repeating: "x", count: limit - 3)))
        #expect(summary[String(repeating: "k", count: limit)] == 1)
    }

    @Test func keysThatDoNotFitAreLeftOutAndCounted() throws {
        var properties: Properties = [:]
        let text = String(repeating: "v", count: 200)
        for index in 0..<12 { properties["key-\(index < 10 ? "0" : "")\(index)"] = .string(text) }
        let summary = try Self.summary(properties, maxKeys: 16)
        // Each member is ~76 bytes: six fit in the 488 bytes left before `$more_keys`.
        #expect(summary.count == 7)
        #expect(summary["$more_keys"] == 6)
        #expect(summary["key-05"] == .string(String(repeating: "v", count: 64)) && summary["key-06"] == nil)
    }
}
