/// `CohorlyValue` reads and writes itself with `JSONDecoder` / `JSONEncoder` too (crash reports keep their
/// free-form context as `CohorlyValue`).
extension CohorlyValue: Codable {
    /// Decodes whichever JSON value is there (integers stay integers).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([CohorlyValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: CohorlyValue].self))
        }
    }

    /// Encodes the value as is.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
