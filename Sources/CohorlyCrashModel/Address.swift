/// A 64-bit address, written as a `"0x…"` string in reports and events (JSON numbers lose precision above 2^53).
public struct Address: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The address.
    public var value: UInt64

    /// Wraps `value`.
    public init(_ value: UInt64) { self.value = value }

    /// `0x` followed by lowercase hex.
    public var description: String { "0x" + String(value, radix: 16) }

    /// Orders by value.
    public static func < (lhs: Address, rhs: Address) -> Bool { lhs.value < rhs.value }

    /// Reads `"0x…"` (or bare hex digits); nil for anything else.
    public init?(hex text: String) {
        if let value = Self.hexDigits(text) {
            self.value = value
            return
        }
        let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : Substring(text)
        guard !digits.isEmpty, let parsed = UInt64(digits, radix: 16) else { return nil }
        value = parsed
    }

    /// `0x` (optional) and at most 16 hex digits, read byte by byte (events hold thousands of addresses); nil
    /// for anything else, which ``init(hex:)`` then reads the general way.
    private static func hexDigits(_ text: String) -> UInt64? {
        var text = text
        return text.withUTF8(hexDigits)
    }

    /// ``init(hex:)``'s fast path over UTF-8 bytes: `0x` (optional) and 1 to 16 hex digits; nil for anything else.
    /// The one hex reader: the CLI's address arguments use it too.
    public static func hexDigits(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var start = 0
        if bytes.count >= 2, bytes[0] == UInt8(ascii: "0"),
            bytes[1] == UInt8(ascii: "x") || bytes[1] == UInt8(ascii: "X")
        {
            start = 2
        }
        guard start < bytes.count, bytes.count - start <= 16 else { return nil }
        var value: UInt64 = 0
        for byte in bytes[start...] {
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

    /// Reads a JSON value: a `"0x…"` string, or a non-negative integer (hand-written files).
    public init?(json: CohorlyValue?) {
        switch json {
        case .string(let text)?: self.init(hex: text)
        case .int(let number)? where number >= 0: self.init(UInt64(number))
        default: return nil
        }
    }

    /// The `"0x…"` JSON string.
    public var json: CohorlyValue { .string(description) }
}
