/// `0x…` / plain hex address parsing and printing.
package enum Hex {
    /// Parses `0x1f54`, `0X1F54` or `1f54` (surrounding ASCII spaces and tabs allowed).
    package static func parse(_ text: String) -> UInt64? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    /// Parses UTF-8 bytes as ``parse(_:)-(String)`` does.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 || bytes[end - 1] == 0x0d { end -= 1 }
        if end - start > 2, bytes[start] == UInt8(ascii: "0"),
            bytes[start + 1] == UInt8(ascii: "x") || bytes[start + 1] == UInt8(ascii: "X")
        {
            start += 2
        }
        guard start < end, end - start <= 16 else { return nil }
        var value: UInt64 = 0
        for byte in bytes[start..<end] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    package static func format(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}
