/// What parsing a JSON document would build, found without building it: how many values (object keys count as
/// values: each is a string kept) and how deep it nests. A server measures a body first and parses it only when
/// the tree fits its memory budget (memory then follows what is kept, not what was sent).
public struct JSONShape: Sendable, Equatable {
    /// Values in the document, object keys included.
    public var values: Int
    /// Containers nested deepest (0 for a scalar document).
    public var depth: Int

    /// A shape of `values` values nesting `depth` deep.
    public init(values: Int, depth: Int) {
        self.values = values
        self.depth = depth
    }

    /// Measures a UTF-8 JSON document; nil when it is not valid JSON (or nests deeper than 512 levels), exactly
    /// when `CohorlyValue(bytes:)` would give nil. Allocates nothing per value.
    public static func measure(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONShape? {
        var scanner = JSONShapeScanner(parser: JSONParser(bytes: bytes))
        return scanner.document()
    }

    /// `measure` over an array's bytes.
    public static func measure(_ bytes: [UInt8]) -> JSONShape? { bytes.withUnsafeBufferPointer { measure($0) } }
}

/// An iterative walk over a document with a stack of open containers (true: an object). Also how `JSONReader`
/// skips a value (no recursion, so any nesting up to the limit costs no stack).
struct JSONShapeScanner {
    var parser: JSONParser
    var open: [Bool] = []
    var shape = JSONShape(values: 0, depth: 0)
    /// Containers already open around the value walked (a reader inside a document).
    var baseDepth = 0
    /// Whether the walk failed on the nesting limit.
    private(set) var tooDeep = false

    init(parser: JSONParser) {
        self.parser = parser
        baseDepth = parser.depth
    }

    mutating func document() -> JSONShape? {
        guard value() else { return nil }
        parser.skipWhitespace()
        return parser.index == parser.bytes.count ? shape : nil
    }

    private var current: UInt8? {
        parser.index < parser.bytes.count ? parser.bytes[parser.index] : nil
    }

    /// One value and everything it contains; the parser is left after it (or at the byte that fails).
    mutating func value() -> Bool {
        while true {
            parser.skipWhitespace()
            guard let byte = current else { return false }
            shape.values += 1
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let object = byte == UInt8(ascii: "{")
                open.append(object)
                guard baseDepth + open.count <= JSONParser.maxDepth else {
                    tooDeep = true
                    return false
                }
                shape.depth = max(shape.depth, open.count)
                parser.index += 1
                parser.skipWhitespace()
                if current == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    parser.index += 1
                    open.removeLast()
                } else {
                    if object, !key() { return false }
                    continue
                }
            case UInt8(ascii: "\""): guard skipString() else { return false }
            case UInt8(ascii: "t"): guard parser.consume("true") else { return false }
            case UInt8(ascii: "f"): guard parser.consume("false") else { return false }
            case UInt8(ascii: "n"): guard parser.consume("null") else { return false }
            default: guard parser.parseNumber() != nil else { return false }
            }
            // After a value: close containers or move to the next member.
            while let object = open.last {
                parser.skipWhitespace()
                guard let next = current else { return false }
                if next == UInt8(ascii: ",") {
                    parser.index += 1
                    if object, !key() { return false }
                    break
                }
                guard next == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                parser.index += 1
                open.removeLast()
            }
            if open.isEmpty { return true }
        }
    }

    /// `"key" :` of an object member (counted as a value).
    private mutating func key() -> Bool {
        parser.skipWhitespace()
        guard current == UInt8(ascii: "\""), skipString() else { return false }
        shape.values += 1
        parser.skipWhitespace()
        guard current == UInt8(ascii: ":") else { return false }
        parser.index += 1
        return true
    }

    /// A string with valid escapes and no control characters, skipped.
    private mutating func skipString() -> Bool {
        parser.index += 1
        while let byte = current {
            parser.index += 1
            switch byte {
            case UInt8(ascii: "\""): return true
            case UInt8(ascii: "\\"):
                guard let escape = current else { return false }
                parser.index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"): guard parser.parseHex4() != nil else { return false }
                default: return false
                }
            case 0..<0x20: return false
            default: continue
            }
        }
        return false
    }
}
