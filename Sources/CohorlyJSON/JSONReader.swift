// A pull reader over a JSON document's bytes: the caller walks objects and arrays member by member and takes
// only what it keeps, so reading a 50 MB crash report into the crash model no longer builds the whole
// `CohorlyValue` tree first (about 6× the file: a dictionary per frame object) only to drop it.
//
// Why written here and not taken from a library: the package links no JSON library besides its own parser (the
// crash model is Foundation-free for the lean `cohorly-symbolicate`, and Foundation's readers build a tree or need
// `Decodable` models with their own allocations). The reader adds only the walk: strings, numbers and literals
// are the `JSONParser`'s (the `json` fuzz target checks it against Foundation), and the nesting limit is the same
// 512 levels, so a document reads here exactly when `CohorlyValue(bytes:)` parses it. Fuzzed as `crashinput`
// (docs/fuzzing.md): what a reader built on it reads equals what the tree readers read.

/// Why a document could not be read: where, and what was wrong.
package struct JSONReadError: Error, Equatable, CustomStringConvertible {
    /// Byte offset of the problem.
    package var offset: Int
    /// True when the document nests deeper than ``JSONReader/maximumDepth``.
    package var tooDeep: Bool

    /// `invalid JSON at byte N`, or `JSON nested deeper than 512 levels at byte N`.
    package var description: String {
        tooDeep
            ? "JSON nested deeper than \(JSONReader.maximumDepth) levels at byte \(offset)"
            : "invalid JSON at byte \(offset)"
    }
}

/// Reads one JSON document front to back; every method consumes exactly one value (or fails).
package struct JSONReader {
    /// What the next value is.
    package enum Kind: Equatable {
        case object, array, string, number, bool, null
    }

    /// The deepest nesting read (as `CohorlyValue(bytes:)`).
    package static let maximumDepth = JSONParser.maxDepth

    private var parser: JSONParser

    /// A reader at the start of `bytes` (valid while they are).
    package init(bytes: UnsafeBufferPointer<UInt8>) { parser = JSONParser(bytes: bytes) }

    private func failure(tooDeep: Bool = false) -> JSONReadError {
        JSONReadError(offset: min(parser.index, parser.bytes.count), tooDeep: tooDeep)
    }

    private var current: UInt8? { parser.index < parser.bytes.count ? parser.bytes[parser.index] : nil }

    /// The kind of the next value (white space skipped); nothing consumed.
    package mutating func peek() throws(JSONReadError) -> Kind {
        parser.skipWhitespace()
        guard let byte = current else { throw failure() }
        switch byte {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw failure()
        }
    }

    /// Reads an object: `member` is called with each key and must consume its value.
    package mutating func readObject(_ member: (inout JSONReader, String) throws(JSONReadError) -> Void)
        throws(JSONReadError)
    {
        try open(UInt8(ascii: "{"))
        defer { parser.depth -= 1 }
        if parser.parseClosing(UInt8(ascii: "}")) { return }
        repeat {
            guard let key = parser.parseKey() else { throw failure() }
            try member(&self, key)
        } while try !close(UInt8(ascii: "}"))
    }

    /// Reads an array: `element` is called for each element and must consume it.
    package mutating func readArray(_ element: (inout JSONReader) throws(JSONReadError) -> Void)
        throws(JSONReadError)
    {
        try open(UInt8(ascii: "["))
        defer { parser.depth -= 1 }
        if parser.parseClosing(UInt8(ascii: "]")) { return }
        repeat { try element(&self) } while try !close(UInt8(ascii: "]"))
    }

    private mutating func open(_ bracket: UInt8) throws(JSONReadError) {
        parser.skipWhitespace()
        guard current == bracket else { throw failure() }
        guard parser.descend() else { throw failure(tooDeep: true) }
    }

    /// After a member or element: true at the closing bracket (consumed), false after a comma.
    private mutating func close(_ bracket: UInt8) throws(JSONReadError) -> Bool {
        guard let ended = parser.parseSeparator(closing: bracket) else { throw failure() }
        return ended
    }

    /// The next value, whole (for the parts a reader keeps as JSON: a context, a breadcrumb's data): the parser's
    /// own recursive descent, as `CohorlyValue(bytes:)` parses.
    package mutating func readValue() throws(JSONReadError) -> CohorlyValue {
        parser.skipWhitespace()
        parser.tooDeepAt = nil
        guard let value = parser.parseValue() else {
            guard let offset = parser.tooDeepAt else { throw failure() }
            throw JSONReadError(offset: offset, tooDeep: true)
        }
        return value
    }

    /// The next value when it is a scalar; a container is skipped (checked) and read as an empty one of its kind,
    /// so a reader that only asks it for a string or a number sees it present, of its type, and unusable.
    package mutating func readScalar() throws(JSONReadError) -> CohorlyValue {
        switch try peek() {
        case .object:
            try skipValue()
            return .object([:])
        case .array:
            try skipValue()
            return .array([])
        default: return try readValue()
        }
    }

    /// An object's members whose values are scalars (others as by ``readScalar()``), the last of a repeated key
    /// kept (as `CohorlyValue(bytes:)`), except the members named in `whole`, kept whole.
    package mutating func readShallowObject(keepingWhole whole: Set<String> = []) throws(JSONReadError)
        -> [String: CohorlyValue]
    {
        var members: [String: CohorlyValue] = [:]
        try readObject { reader, key throws(JSONReadError) in
            members[key] = whole.contains(key) ? try reader.readValue() : try reader.readScalar()
        }
        return members
    }

    /// Skips the next value, checking it as `CohorlyValue(bytes:)` would, without building it or recursing (a
    /// value nesting to the limit costs no stack).
    package mutating func skipValue() throws(JSONReadError) {
        var scanner = JSONShapeScanner(parser: parser)
        let valid = scanner.value()
        parser.index = scanner.parser.index
        guard valid else { throw failure(tooDeep: scanner.tooDeep) }
    }

    /// Checks that nothing but white space follows the document.
    package mutating func finish() throws(JSONReadError) {
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw failure() }
    }
}

extension CohorlyValue {
    /// Reads `bytes` with a ``JSONReader``: `body` reads the document's one value; then only white space may
    /// follow.
    package static func read<T>(
        _ bytes: [UInt8], _ body: (inout JSONReader) throws(JSONReadError) -> T
    ) throws(JSONReadError) -> T {
        let result: Result<T, JSONReadError> = bytes.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(bytes: buffer)
            do throws(JSONReadError) {
                let value = try body(&reader)
                try reader.finish()
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
