import CohorlyCrashModel

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
        return Address.hexDigits(UnsafeBufferPointer(rebasing: bytes[start..<end]))
    }

    package static func format(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}
