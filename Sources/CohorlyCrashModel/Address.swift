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
        let digits = text.hasPrefix("0x") || text.hasPrefix("0X") ? text.dropFirst(2) : Substring(text)
        guard !digits.isEmpty, let parsed = UInt64(digits, radix: 16) else { return nil }
        value = parsed
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
