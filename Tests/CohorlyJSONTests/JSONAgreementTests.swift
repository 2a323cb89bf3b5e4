import Foundation
import Testing

@testable import CohorlyJSON

/// The tree's text, the streaming `JSONWriter` and the pull `JSONReader` agree with each other, and Python's
/// `json` module (an independent implementation) reads what the tree writes as the same values.
@Suite struct JSONAgreementTests {
    /// Values with every kind, awkward strings and numbers at the edges.
    static let samples: [CohorlyValue] = [
        nil, true, false, 0, -1, .int(.min), .int(.max), 0.5, -1e-300, 1.7976931348623157e308,
        .double(.leastNonzeroMagnitude), 1e21,
        "", "plain", "quote \" backslash \\ slash /", "\u{0}\u{1}\u{1F}\u{7F}", "tab\tline\ncr\r", "é€😀\u{10FFFF}",
        "\u{2028}\u{2029}\u{FEFF}",
        [], [:], [[[[]]]], ["a": ["b": ["c": [1, 2.5, "three", nil, true]]]],
        ["z": 1, "a": 2, "m": ["é": "x", "e": "y", "E": "z"], "": "empty key", "\n": "newline key"],
        .array((0..<50).map { .int($0 * 7_919 - 100_000) }),
    ]

    /// `value` written through the streaming writer, each object's members in sorted order.
    static func stream(_ value: CohorlyValue, into writer: inout JSONWriter) {
        switch value {
        case .null: writer.value(.null)
        case .bool(let flag): writer.bool(flag)
        case .int(let number): writer.int(number)
        case .double(let number): writer.double(number)
        case .string(let text): writer.string(text)
        case .array(let elements):
            writer.openArray()
            for element in elements { stream(element, into: &writer) }
            writer.closeArray()
        case .object(let members):
            writer.openObject()
            for key in members.keys.sorted() {
                writer.key(key)
                stream(members[key, default: .null], into: &writer)
            }
            writer.closeObject()
        }
    }

    /// `bytes` read through the pull reader, containers member by member.
    static func pull(_ reader: inout JSONReader) throws(JSONReadError) -> CohorlyValue {
        switch try reader.peek() {
        case .object:
            var members: [String: CohorlyValue] = [:]
            try reader.readObject { reader, key throws(JSONReadError) in members[key] = try pull(&reader) }
            return .object(members)
        case .array:
            var elements: [CohorlyValue] = []
            try reader.readArray { reader throws(JSONReadError) in elements.append(try pull(&reader)) }
            return .array(elements)
        default: return try reader.readScalar()
        }
    }

    @Test func theStreamingWriterWritesTheTreesText() {
        for value in Self.samples + [.array(Self.samples), ["all": .array(Self.samples)]] {
            var writer = JSONWriter()
            Self.stream(value, into: &writer)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == value.jsonString)
        }
    }

    @Test func thePullReaderReadsWhatTheParserReads() throws {
        for value in Self.samples + [.array(Self.samples)] {
            let bytes = Array(value.jsonString.utf8)
            let pulled = try CohorlyValue.read(bytes) { reader throws(JSONReadError) in try Self.pull(&reader) }
            #expect(pulled == CohorlyValue(bytes: bytes))
            #expect(pulled == value)
            let skipped: Void? = try? CohorlyValue.read(bytes) { reader throws(JSONReadError) in
                try reader.skipValue()
            }
            #expect(skipped != nil)
        }
        // Trailing bytes after the one value are an error at their offset.
        #expect(throws: JSONReadError(offset: 4, tooDeep: false)) {
            try CohorlyValue.read(Array("[1] x".utf8)) { reader throws(JSONReadError) in try Self.pull(&reader) }
        }
        #expect(throws: JSONReadError(offset: 3, tooDeep: false)) {
            try CohorlyValue.read(Array("[1,]".utf8)) { reader throws(JSONReadError) in try Self.pull(&reader) }
        }
    }

    @Test func aShallowReadKeepsScalarsAndEmptiesContainersUnlessAskedWhole() throws {
        let bytes = Array(#"{"n":1,"s":"x","o":{"a":1},"l":[1,2],"keep":{"b":[2]}}"#.utf8)
        let members = try CohorlyValue.read(bytes) { reader throws(JSONReadError) in
            try reader.readShallowObject(keepingWhole: ["keep"])
        }
        #expect(members == ["n": 1, "s": "x", "o": [:], "l": [], "keep": ["b": [2]]])
    }

    /// Python parses every sample as written here and writes it back (ASCII-only, so every non-ASCII character
    /// comes back as `\u` escapes, astral ones as surrogate pairs); that text parses here to the sample again.
    @Test func pythonsJSONModuleReadsAndWritesTheSameValues() throws {
        let script = """
            import json, sys
            for line in sys.stdin:
                print(json.dumps(json.loads(line), ensure_ascii=True, sort_keys=True, separators=(",", ":")))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let lines = Self.samples.map(\.jsonString).joined(separator: "\n") + "\n"
        input.fileHandleForWriting.write(Data(lines.utf8))
        try input.fileHandleForWriting.close()
        let echoed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let texts = String(decoding: echoed, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(texts.count == Self.samples.count)
        for (text, sample) in zip(texts, Self.samples) {
            #expect(CohorlyValue(json: text) == sample, "\(text)")
        }
        // Python's surrogate pairs and \u escapes are what made the non-ASCII strings come back.
        #expect(texts.contains { $0.contains(#"\ud83d\ude00"#) })
    }
}
