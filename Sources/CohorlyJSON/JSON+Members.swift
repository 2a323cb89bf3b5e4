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
        if !parseClosing(UInt8(ascii: "}")) {
            while true {
                guard let key = parseKey(), let value = parseValue() else { return nil }
                members.append((key, value))
                guard let ended = parseSeparator(closing: UInt8(ascii: "}")) else { return nil }
                if ended { break }
            }
        }
        skipWhitespace()
        return index == bytes.count ? members : nil
    }
}
