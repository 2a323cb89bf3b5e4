// Compact JSON writing and parsing for `CohorlyValue`: the queue stores each event as JSON text and the
// transport joins stored texts into one array body, so events are serialized exactly once.

extension CohorlyValue {
    /// The value as compact JSON text (object keys sorted, so equal values give equal text).
    public var jsonString: String {
        var out = ""
        write(into: &out)
        return out
    }

    /// Parses JSON text; nil when it is not valid JSON (or nests deeper than 512 levels).
    public init?(json: String) {
        var text = json
        let parsed: CohorlyValue? = text.withUTF8 { bytes in
            var parser = JSONParser(bytes: bytes)
            return parser.parseDocument()
        }
        guard let parsed else { return nil }
        self = parsed
    }

    package func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += value.isFinite ? String(value) : "null"
        case .string(let value): Self.writeString(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, into: &out)
                out += ":"
                members[key, default: .null].write(into: &out)
            }
            out += "}"
        }
    }

    /// `string` quoted and escaped into `out`. The escaping is ``JSONWriter/append(_:to:)``'s, so the tree and the
    /// writer give the same text; a string with nothing to escape is appended as it is.
    package static func writeString(_ string: String, into out: inout String) {
        guard string.utf8.contains(where: JSONWriter.needsEscape) else {
            out += "\""
            out += string
            out += "\""
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count + 8)
        JSONWriter.append(string, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }
}

/// A recursive-descent JSON parser over UTF-8 bytes with a nesting limit.
struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0
    /// Where the nesting limit was passed (the container that opened one level too many), when it was.
    var tooDeepAt: Int?
    static let maxDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func parseDocument() -> CohorlyValue? {
        guard let value = parseValue() else { return nil }
        skipWhitespace()
        // Not `index == bytes.count ? value : nil`: CohorlyValue is ExpressibleByNilLiteral, so that `nil` was
        // `.null` and a document with trailing bytes ("1x", "{…} junk") parsed as null.
        guard index == bytes.count else { return nil }
        return value
    }

    mutating func skipWhitespace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }

    mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] { return false }
        index += count
        return true
    }

    mutating func parseValue() -> CohorlyValue? {
        skipWhitespace()
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return parseObject()
        case UInt8(ascii: "["): return parseArray()
        case UInt8(ascii: "\""): return parseString().map(CohorlyValue.string)
        case UInt8(ascii: "t"): return consume("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return consume("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return consume("null") ? .null : nil
        default: return parseNumber()
        }
    }

    mutating func parseObject() -> CohorlyValue? {
        guard descend() else { return nil }
        defer { depth -= 1 }
        var members: [String: CohorlyValue] = [:]
        if parseClosing(UInt8(ascii: "}")) { return .object(members) }
        while true {
            guard let key = parseKey(), let value = parseValue() else { return nil }
            members[key] = value
            guard let ended = parseSeparator(closing: UInt8(ascii: "}")) else { return nil }
            if ended { return .object(members) }
        }
    }

    /// Enters the object or array whose opening bracket is at `index` (consumed): one level deeper; false past
    /// ``maxDepth``, the offset noted in `tooDeepAt`.
    mutating func descend() -> Bool {
        guard depth < Self.maxDepth else {
            tooDeepAt = index
            return false
        }
        depth += 1
        index += 1
        return true
    }

    /// Whether `closing` comes next (white space skipped), consumed when it does: an empty object or array.
    mutating func parseClosing(_ closing: UInt8) -> Bool {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == closing else { return false }
        index += 1
        return true
    }

    /// A member's key and the colon after it, white space around them skipped; nil when they are not there.
    mutating func parseKey() -> String? {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = parseString() else { return nil }
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
        index += 1
        return key
    }

    /// What follows a member or an element, consumed: true for `closing` (the object or array ends), false for a
    /// comma (another follows), nil for anything else.
    mutating func parseSeparator(closing: UInt8) -> Bool? {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ",") || bytes[index] == closing else { return nil }
        index += 1
        return bytes[index - 1] == closing
    }

    mutating func parseArray() -> CohorlyValue? {
        guard descend() else { return nil }
        defer { depth -= 1 }
        var elements: [CohorlyValue] = []
        if parseClosing(UInt8(ascii: "]")) { return .array(elements) }
        while true {
            guard let value = parseValue() else { return nil }
            elements.append(value)
            guard let ended = parseSeparator(closing: UInt8(ascii: "]")) else { return nil }
            if ended { return .array(elements) }
        }
    }

    mutating func parseHex4() -> UInt32? {
        guard index + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    mutating func parseString() -> String? {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""),
            bytes[index] != UInt8(ascii: "\\")
        {
            if bytes[index] < 0x20 { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "\"") {
            let result = String(
                decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            index += 1
            return result
        }
        var buffer = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: buffer, as: UTF8.self)
            }
            if byte < 0x20 { return nil }
            if byte != UInt8(ascii: "\\") {
                buffer.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { return nil }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
            case UInt8(ascii: "b"): buffer.append(0x08)
            case UInt8(ascii: "f"): buffer.append(0x0C)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "u"):
                guard var code = parseHex4() else { return nil }
                if (0xD800..<0xDC00).contains(code) {
                    // A high surrogate pairs with a following `\u` low surrogate. Anything else after it is
                    // read on its own (the lone surrogate becomes U+FFFD; the next escape is not swallowed).
                    let next = index
                    if consume("\\u"), let low = parseHex4(), (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        index = next
                    }
                }
                let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                buffer.append(contentsOf: Array(String(scalar).utf8))
            default: return nil
            }
        }
        return nil
    }

    /// A number as RFC 8259 writes it: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    mutating func parseNumber() -> CohorlyValue? {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = skipDigits()
        // No leading zeros, and at least one digit.
        guard integerDigits == 1 || (integerDigits > 1 && bytes[integerStart] != UInt8(ascii: "0")) else {
            return nil
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard skipDigits() > 0 else { return nil }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard skipDigits() > 0 else { return nil }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger, let value = Int(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { return nil }
        return .double(value)
    }

    /// Skips ASCII digits; how many there were.
    mutating func skipDigits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            index += 1
        }
        return index - start
    }
}

extension CohorlyValue {
    /// Parses a UTF-8 JSON document; nil when it is not valid JSON.
    public init?(bytes: [UInt8]) {
        let parsed: CohorlyValue? = bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer)
            return parser.parseDocument()
        }
        guard let parsed else { return nil }
        self = parsed
    }
}
