import CohorlyCollectorCore

/// A Sentry envelope (docs/sentry.md "Local collector"), read strictly from a whole body that the
/// collector's body limit already bounds; items are slices of that body, never copies.
///
/// Framing, as Relay reads it: the envelope header is the first line, one JSON object (the whole body when it
/// holds no newline). Each item is a header line (a JSON object with `type`, and `length` in bytes when the
/// payload is length-prefixed), then its payload: exactly `length` bytes followed by `\n` or the end, or without
/// `length` everything up to the next `\n` or the end. White space before an item header is skipped (so a
/// trailing newline ends nothing). A repeated known header field (`sent_at`, `event_id`, …) is refused, as
/// Relay's strict header parse refuses it; unknown fields and item types are kept for the caller to skip.
struct SentryEnvelope {
    /// One item: its type, its header and its payload (a slice of the body).
    struct Item {
        var type: String
        var header: [String: JSONValue]
        var payload: ArraySlice<UInt8>
    }

    /// Why an envelope is refused (answered 400 with this reason).
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// The envelope header's fields.
    var header: [String: JSONValue]
    /// The items in order.
    var items: [Item]

    /// Envelope header fields that may appear once.
    static let envelopeFields: Set<String> = ["event_id", "dsn", "sent_at", "sdk", "trace"]
    /// Item header fields that may appear once.
    static let itemFields: Set<String> = ["type", "length", "content_type", "filename", "attachment_type"]

    /// Parses `bytes`; throws ``Invalid`` for any framing or header error.
    init(parsing bytes: ArraySlice<UInt8>) throws(Invalid) {
        let newline = UInt8(ascii: "\n")
        let end = bytes.endIndex
        let headerEnd = bytes.firstIndex(of: newline) ?? end
        header = try Self.object(bytes[bytes.startIndex..<headerEnd], "envelope header", Self.envelopeFields)
        if let id = header["event_id"], id != .null, id.stringValue.flatMap(Self.eventId) == nil {
            throw Invalid(description: "invalid envelope header: event_id is not a UUID")
        }
        if let sentAt = header["sent_at"], sentAt != .null, sentAt.stringValue.flatMap(RFC3339.milliseconds) == nil {
            throw Invalid(description: "invalid envelope header: sent_at is not an RFC 3339 time")
        }
        items = []
        var offset = headerEnd == end ? end : headerEnd + 1
        while true {
            while offset < end, [0x20, 0x09, 0x0D, 0x0A].contains(bytes[offset]) { offset += 1 }
            guard offset < end else { break }
            let number = items.count + 1
            let lineEnd = bytes[offset...].firstIndex(of: newline) ?? end
            let fields = try Self.object(bytes[offset..<lineEnd], "item \(number) header", Self.itemFields)
            guard let type = fields["type"]?.stringValue, !type.isEmpty else {
                throw Invalid(description: "item \(number): missing type")
            }
            offset = lineEnd == end ? end : lineEnd + 1
            let payload: ArraySlice<UInt8>
            if let declared = fields["length"], declared != .null {
                guard let length = declared.intValue, length >= 0 else {
                    throw Invalid(description: "item \(number) (\(type)): invalid length")
                }
                guard length <= end - offset else {
                    throw Invalid(
                        description: "item \(number) (\(type)): length \(length) runs past the end of the envelope")
                }
                payload = bytes[offset..<offset + length]
                offset += length
                if offset < end {
                    guard bytes[offset] == newline else {
                        throw Invalid(description: "item \(number) (\(type)): payload not followed by a newline")
                    }
                    offset += 1
                }
            } else {
                let payloadEnd = bytes[offset...].firstIndex(of: newline) ?? end
                payload = bytes[offset..<payloadEnd]
                offset = payloadEnd == end ? end : payloadEnd + 1
            }
            items.append(Item(type: type, header: fields, payload: payload))
        }
    }

    /// A header line as an object, refusing a repeated field of `unique`.
    private static func object(_ line: ArraySlice<UInt8>, _ what: String, _ unique: Set<String>) throws(Invalid)
        -> [String: JSONValue]
    {
        guard let members = JSONValue.members(ofObject: line) else {
            throw Invalid(description: "invalid \(what): not a JSON object")
        }
        var fields: [String: JSONValue] = [:]
        for (key, value) in members {
            if fields[key] != nil, unique.contains(key) {
                throw Invalid(description: "invalid \(what): duplicate field `\(key)`")
            }
            fields[key] = value
        }
        return fields
    }

    /// An event id (32 hex digits, or a dashed UUID, any case) as the lowercase dashed UUID the other wires
    /// store as `$insert_id`; nil when it is neither.
    static func eventId(_ text: String) -> String? {
        if let canonical = UUIDText.canonical(text) { return canonical }
        let utf8 = Array(text.lowercased().utf8)
        guard utf8.count == 32, utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            return nil
        }
        var dashed = ""
        for (index, byte) in utf8.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { dashed += "-" }
            dashed.unicodeScalars.append(Unicode.Scalar(byte))
        }
        return dashed
    }
}
