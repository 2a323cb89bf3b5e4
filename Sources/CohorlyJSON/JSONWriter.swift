/// Compact JSON written straight into bytes, for a schema known in advance (a Sentry event, one per envelope),
/// without building a ``CohorlyValue`` tree and sorting each object's keys. Members come out in the order they
/// are written: a caller that writes each object's members in sorted order gets the text
/// ``CohorlyValue/jsonString`` makes of the same tree. Separators are placed here; the caller only opens, names
/// and closes.
package struct JSONWriter {
    /// The text so far.
    package private(set) var bytes: [UInt8] = []
    /// Whether the next value or member needs a comma before it.
    private var separate = false

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    /// Starts an object (as a value: after a key, or as an array's element).
    package mutating func openObject() { open(0x7B) }
    /// Ends the object.
    package mutating func closeObject() { close(0x7D) }
    /// Starts an array.
    package mutating func openArray() { open(0x5B) }
    /// Ends the array.
    package mutating func closeArray() { close(0x5D) }

    /// A member's key; its value is written next.
    package mutating func key(_ name: String) {
        start()
        Self.append(name, to: &bytes)
        bytes.append(0x3A)
        separate = false
    }

    /// A string value.
    package mutating func string(_ value: String) {
        start()
        Self.append(value, to: &bytes)
        separate = true
    }

    /// An integer value.
    package mutating func int(_ value: Int) { raw(String(value)) }

    /// A boolean value.
    package mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    /// A number value (`null` when it is not finite), as ``CohorlyValue/jsonString`` writes it.
    package mutating func double(_ value: Double) { raw(value.isFinite ? String(value) : "null") }

    /// Any value, as ``CohorlyValue/jsonString`` writes it.
    package mutating func value(_ value: CohorlyValue) { raw(value.jsonString) }

    /// `key` and its string value.
    package mutating func member(_ name: String, _ value: String) {
        key(name)
        string(value)
    }

    private mutating func raw(_ text: String) {
        start()
        bytes += text.utf8
        separate = true
    }

    private mutating func open(_ bracket: UInt8) {
        start()
        bytes.append(bracket)
        separate = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        separate = true
    }

    private mutating func start() {
        if separate { bytes.append(0x2C) }
    }

    /// Whether a string's UTF-8 `byte` is written escaped: a control character, `"` or `\`.
    package static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

    /// `string` quoted and escaped into `bytes`: the one escaping every JSON text of this module uses (the tree's
    /// ``CohorlyValue/writeString(_:into:)`` calls it).
    package static func append(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(0x22)
        let utf8 = string.utf8
        if !utf8.contains(where: needsEscape) {
            bytes += utf8
        } else {
            let hex = Array("0123456789abcdef".utf8)
            for byte in utf8 {
                switch byte {
                case 0x22: bytes += [0x5C, 0x22]
                case 0x5C: bytes += [0x5C, 0x5C]
                case 0x0A: bytes += [0x5C, 0x6E]
                case 0x0D: bytes += [0x5C, 0x72]
                case 0x09: bytes += [0x5C, 0x74]
                case ..<0x20: bytes += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                default: bytes.append(byte)
                }
            }
        }
        bytes.append(0x22)
    }
}
