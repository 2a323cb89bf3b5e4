import CohorlyCommandLine
import CohorlySymbols
import Foundation
import Testing

/// `ByteOutput`, the buffer `symbolicate --exe` writes through: the same escapes as `TerminalText`, whole bytes
/// in order past its capacity, exact numbers.
@Suite struct ByteOutputTests {
    static func escaped(_ text: String, capacity: Int = 1 << 16) -> String {
        var output = ByteOutput(descriptor: nil, capacity: capacity)
        var text = text
        text.withUTF8 { output.appendEscaped($0) }
        return output.withBytes { String(decoding: $0, as: UTF8.self) }
    }

    @Test(arguments: [
        "plain/path/to/file.swift", "", "tab\there", "line\nbreak\r\n", "\u{1b}[31mred\u{1b}[0m", "bell\u{07}",
        "del\u{7f}", "c1 \u{9b}31m and \u{85}", "copyright © degree ° é ü 日本", "\u{80}\u{9f}\u{a0}",
        String(repeating: "long-name-", count: 20) + "\u{1b}",
    ])
    func escapesAsTerminalTextDoes(_ text: String) {
        #expect(Self.escaped(text) == TerminalText.escaped(text))
        #expect(Self.escaped(text, capacity: 64) == TerminalText.escaped(text))
    }

    /// The word-at-a-time scan flags exactly the texts with a byte that may need escaping, wherever in a word
    /// (and in the tail past the last whole word) that byte is, whatever the bytes around it.
    @Test func theWordScanFlagsEveryByteThatMayNeedEscaping() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<40 {
            for _ in 0..<200 {
                // Mostly plain bytes, with values near the ones tested (0x1f, 0x20, 0x7e, 0x80, 0xc1, 0xc3) common.
                let bytes = (0..<length).map { _ -> UInt8 in
                    let near: [UInt8] = [0x00, 0x1f, 0x20, 0x21, 0x7e, 0x7f, 0x80, 0xff, 0xc1, 0xc2, 0xc3, 0x42]
                    return Int.random(in: 0..<6, using: &generator) == 0
                        ? near.randomElement(using: &generator) ?? 0x41
                        : UInt8.random(in: 0x20...0x7e, using: &generator)
                }
                let expected = bytes.contains { $0 < 0x20 || $0 == 0x7f || $0 == 0xc2 }
                #expect(bytes.withUnsafeBufferPointer { ByteOutput.mayNeedEscaping($0) } == expected, "\(bytes)")
            }
        }
        for special: UInt8 in [0x00, 0x1f, 0x7f, 0xc2] {
            for position in 0..<24 {
                var bytes = [UInt8](repeating: 0xff, count: 24)
                bytes[position] = special
                #expect(bytes.withUnsafeBufferPointer { ByteOutput.mayNeedEscaping($0) })
            }
        }
        for plain: UInt8 in [0x20, 0x7e, 0x80, 0xc1, 0xc3, 0xff] {
            let bytes = [UInt8](repeating: plain, count: 24)
            #expect(!bytes.withUnsafeBufferPointer { ByteOutput.mayNeedEscaping($0) })
        }
    }

    @Test func aLoneLeadByteAtTheEndIsCopied() {
        var output = ByteOutput(descriptor: nil)
        [UInt8]([0x61, 0xc2]).withUnsafeBufferPointer { output.appendEscaped($0) }
        #expect(output.withBytes { Array($0) } == [0x61, 0xc2])
    }

    @Test func numbersAndBytesPastTheCapacity() {
        var output = ByteOutput(descriptor: nil, capacity: 64)
        var expected = ""
        for value: UInt64 in [0, 9, 10, 0xff, 1 << 32, .max] {
            output.appendHex(value)
            output.append(UInt8(ascii: " "))
            output.appendDecimal(value)
            output.append("\n")
            expected += "0x" + String(value, radix: 16) + " " + String(value) + "\n"
        }
        #expect(output.withBytes { String(decoding: $0, as: UTF8.self) } == expected)
    }

    @Test func aDescriptorGetsEveryByteInOrder() throws {
        let path = Scratch.path("byte-output-\(getpid())")
        defer { unlink(path) }
        let descriptor = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600)
        #expect(descriptor >= 0)
        let pieces = (0..<3_000).map { "piece \($0) \u{1b}\n" }
        do {
            var output = ByteOutput(descriptor: descriptor, capacity: 64)
            for piece in pieces {
                var piece = piece
                piece.withUTF8 { output.appendEscaped($0) }
            }
            output.flush()
        }
        close(descriptor)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written == pieces.map(TerminalText.escaped).joined())
    }
}
