/// The members of a JSON object's text as raw byte ranges, found without building any value: a destination that
/// re-shapes a queued record copies most members as they are and parses only the few it needs.
package struct JSONMembers {
    package let bytes: [UInt8]
    /// Each member's key (unescaped), the range of its key's text (quotes included) and of its value's text.
    package private(set) var members: [(key: String, keyText: Range<Int>, value: Range<Int>)] = []

    /// The object at `range` of `bytes` (default: the whole text); nil when it is not a well-formed object.
    package init?(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        let range = range ?? 0..<bytes.count
        var index = skipSpace(range.lowerBound, range.upperBound)
        guard index < range.upperBound, bytes[index] == UInt8(ascii: "{") else { return nil }
        index = skipSpace(index + 1, range.upperBound)
        if index < range.upperBound, bytes[index] == UInt8(ascii: "}") { return }
        while index < range.upperBound {
            guard bytes[index] == UInt8(ascii: "\""), let keyEnd = skipString(index, range.upperBound) else {
                return nil
            }
            let keyText = index..<keyEnd
            index = skipSpace(keyEnd, range.upperBound)
            guard index < range.upperBound, bytes[index] == UInt8(ascii: ":") else { return nil }
            let valueStart = skipSpace(index + 1, range.upperBound)
            guard let valueEnd = skipValue(valueStart, range.upperBound) else { return nil }
            members.append((key(keyText), keyText, valueStart..<valueEnd))
            index = skipSpace(valueEnd, range.upperBound)
            guard index < range.upperBound else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index = skipSpace(index + 1, range.upperBound)
        }
        return nil
    }

    /// The range of `key`'s value.
    package subscript(key: String) -> Range<Int>? { members.first { $0.key == key }?.value }

    /// The value of `key`, parsed.
    package func value(_ key: String) -> CohorlyValue? { self[key].flatMap { CohorlyValue(bytes: Array(bytes[$0])) } }

    /// The text of `range`.
    package func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    private func key(_ text: Range<Int>) -> String {
        let inner = bytes[(text.lowerBound + 1)..<(text.upperBound - 1)]
        if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
        return CohorlyValue(bytes: Array(bytes[text]))?.stringValue ?? ""
    }

    private func skipSpace(_ start: Int, _ end: Int) -> Int {
        var index = start
        while index < end, [0x20, 0x0a, 0x0d, 0x09].contains(bytes[index]) { index += 1 }
        return index
    }

    /// The index after the string starting at `start` (its opening quote).
    private func skipString(_ start: Int, _ end: Int) -> Int? {
        var index = start + 1
        while index < end {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return nil
    }

    /// The index after the value starting at `start`.
    private func skipValue(_ start: Int, _ end: Int) -> Int? {
        guard start < end else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""): return skipString(start, end)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < end {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard let after = skipString(index, end) else { return nil }
                    index = after
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return nil
        default:
            var index = start
            while index < end,
                ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0a, 0x0d, 0x09]
                    .contains(bytes[index])
            {
                index += 1
            }
            return index > start ? index : nil
        }
    }
}
