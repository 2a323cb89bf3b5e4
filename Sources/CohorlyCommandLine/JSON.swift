/// Minimal JSON writing for `--json` output (keys keep the order given).
package enum JSON {
    package indirect enum Value {
        case string(String)
        case int(Int)
        /// An unsigned 64-bit number (offsets, sizes): written exactly, never converted to `Int`.
        case uint(UInt64)
        case bool(Bool)
        case null
        case array([Value])
        case object([(String, Value)])
    }

    package static func string(_ value: String?) -> Value { value.map(Value.string) ?? .null }

    package static func render(_ value: Value) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// ``render(_:)`` as UTF-8 bytes.
    package static func bytes(_ value: Value) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(value, into: &out)
        return out
    }

    private static func write(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .string(let text): escape(text, into: &out)
        case .int(let number): out += String(number).utf8
        case .uint(let number): out += String(number).utf8
        case .bool(let flag): out += (flag ? "true" : "false").utf8
        case .null: out += "null".utf8
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let pairs):
            out.append(UInt8(ascii: "{"))
            for (position, pair) in pairs.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                escape(pair.0, into: &out)
                out.append(UInt8(ascii: ":"))
                write(pair.1, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a JSON string: quotes, backslashes and control characters escaped, UTF-8 kept. Runs of
    /// bytes that need no escape (nearly all of a path, id or name) are copied whole.
    private static func escape(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case 0x0a: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0d: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                default:
                    out += Array("\\u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0xf)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
