/// A JSON value: what event and profile properties hold.
///
/// Literals build it directly, so `["plan": "pro", "seats": 3, "beta": true]` is a `Properties` value.
public enum CohorlyValue: Sendable, Hashable {
    /// JSON `null`.
    case null
    /// JSON `true` / `false`.
    case bool(Bool)
    /// A JSON integer.
    case int(Int)
    /// A JSON number with a fraction or exponent. Non-finite values are written as `null`.
    case double(Double)
    /// A JSON string.
    case string(String)
    /// A JSON array.
    case array([CohorlyValue])
    /// A JSON object.
    case object([String: CohorlyValue])
}

/// Event or profile properties: names to JSON values.
public typealias Properties = [String: CohorlyValue]

extension CohorlyValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
    ExpressibleByNilLiteral
{
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer value.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A floating-point value.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array value.
    public init(arrayLiteral elements: CohorlyValue...) { self = .array(elements) }
    /// An object value (later duplicate keys win).
    public init(dictionaryLiteral elements: (String, CohorlyValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
}

extension CohorlyValue {
    /// The string, when this is a string value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
    /// The integer, when this is an integer value (or a double with no fraction).
    public var intValue: Int? {
        switch self {
        case .int(let value): return value
        case .double(let value) where value.rounded() == value && abs(value) < 9.0e15: return Int(value)
        default: return nil
        }
    }
    /// The number as a `Double`, when this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }
    /// The members, when this is an object.
    public var objectValue: [String: CohorlyValue]? {
        if case .object(let value) = self { return value }
        return nil
    }
    /// The elements, when this is an array.
    public var arrayValue: [CohorlyValue]? {
        if case .array(let value) = self { return value }
        return nil
    }
    /// Looks up a member of an object (nil for other values).
    public subscript(key: String) -> CohorlyValue? { objectValue?[key] }
}
