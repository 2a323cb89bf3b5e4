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
