extension CohorlyValue {
    /// A JSON object's top-level members in the order written, duplicates kept (`CohorlyValue(bytes:)` keeps
    /// only the last of a repeated key); nil when `bytes` is not one valid JSON object. For formats that must
    /// refuse a repeated field, such as a Sentry envelope header's `sent_at`.
    package static func members(ofObject bytes: ArraySlice<UInt8>) -> [(key: String, value: CohorlyValue)]? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer)
            return parser.parseMembers()
        }
    }
}

extension JSONParser {
    /// The members of the one object the bytes hold (nothing but white space around it).
    mutating func parseMembers() -> [(key: String, value: CohorlyValue)]? {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        depth = 1
        index += 1
        var members: [(key: String, value: CohorlyValue)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = parseString() else {
                    return nil
                }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let value = parseValue() else { return nil }
                members.append((key, value))
                skipWhitespace()
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    break
                } else {
                    return nil
                }
            }
        }
        skipWhitespace()
        return index == bytes.count ? members : nil
    }
}
