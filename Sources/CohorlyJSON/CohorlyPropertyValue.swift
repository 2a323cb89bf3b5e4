/// A Swift value that can be an event or profile property: it knows its JSON form.
///
/// Lets properties come from variables, not only literals:
///
/// ```swift
/// let plan = "pro"
/// cohorly.track("Checkout", properties: ["plan": plan, "seats": seats, "at": Date(), "tags": tags])
/// ```
///
/// Conforming: `String`, `Substring`, `Bool`, every integer type, `Double`, `Float`, `Date` (ISO 8601 text,
/// UTC, milliseconds), `URL` (its absolute string), `UUID` (lowercase text), `CohorlyValue`, and optionals
/// (`nil` is JSON `null`), arrays and `String`-keyed dictionaries of conforming values. A value of any other
/// type does not compile, so nothing is dropped at run time. No value traps: an integer beyond `Int`'s range
/// (a large `UInt64`) becomes a JSON number with a double's precision, and a non-finite `Double` or `Float`
/// becomes `null` (JSON has no NaN or infinity).
public protocol CohorlyPropertyValue {
    /// The JSON value sent for this value.
    var cohorlyValue: CohorlyValue { get }
}

extension CohorlyValue: CohorlyPropertyValue {
    /// The value itself.
    public var cohorlyValue: CohorlyValue { self }
}

extension CohorlyValue {
    /// The JSON form of a property value (`CohorlyValue(Date())`, `CohorlyValue(seats)`).
    public init(_ value: some CohorlyPropertyValue) { self = value.cohorlyValue }

    /// A JSON object from property values of mixed types (`CohorlyValue(object: ["plan": plan, "seats": seats])`),
    /// for a nested object whose values are variables of different types.
    public init(object: [String: any CohorlyPropertyValue]) { self = .object(object.cohorlyProperties) }

    /// A JSON array from property values of mixed types (`CohorlyValue(array: [name, count])`).
    public init(array: [any CohorlyPropertyValue]) { self = .array(array.map(\.cohorlyValue)) }
}

extension String: CohorlyPropertyValue {
    /// A JSON string.
    public var cohorlyValue: CohorlyValue { .string(self) }
}

extension Substring: CohorlyPropertyValue {
    /// A JSON string.
    public var cohorlyValue: CohorlyValue { .string(String(self)) }
}

extension Bool: CohorlyPropertyValue {
    /// JSON `true` or `false`.
    public var cohorlyValue: CohorlyValue { .bool(self) }
}

extension CohorlyPropertyValue where Self: BinaryInteger {
    /// A JSON integer; beyond `Int`'s range (a `UInt64` over `Int64.max`) a JSON number with a double's precision.
    public var cohorlyValue: CohorlyValue { Int(exactly: self).map(CohorlyValue.int) ?? .double(Double(self)) }
}

extension Int: CohorlyPropertyValue {}
extension Int8: CohorlyPropertyValue {}
extension Int16: CohorlyPropertyValue {}
extension Int32: CohorlyPropertyValue {}
extension Int64: CohorlyPropertyValue {}
extension UInt: CohorlyPropertyValue {}
extension UInt8: CohorlyPropertyValue {}
extension UInt16: CohorlyPropertyValue {}
extension UInt32: CohorlyPropertyValue {}
extension UInt64: CohorlyPropertyValue {}

extension Double: CohorlyPropertyValue {
    /// A JSON number; `null` when not finite.
    public var cohorlyValue: CohorlyValue { isFinite ? .double(self) : .null }
}

extension Float: CohorlyPropertyValue {
    /// A JSON number with the float's shortest decimal form (`0.1`, not `0.10000000149011612`); `null` when not
    /// finite.
    public var cohorlyValue: CohorlyValue {
        guard isFinite else { return .null }
        return .double(Double(description) ?? Double(self))
    }
}

extension Optional: CohorlyPropertyValue where Wrapped: CohorlyPropertyValue {
    /// The wrapped value's JSON form, or `null`.
    public var cohorlyValue: CohorlyValue { self?.cohorlyValue ?? .null }
}

extension Array: CohorlyPropertyValue where Element: CohorlyPropertyValue {
    /// A JSON array of the elements' JSON forms.
    public var cohorlyValue: CohorlyValue { .array(map(\.cohorlyValue)) }
}

extension Dictionary: CohorlyPropertyValue where Key == String, Value: CohorlyPropertyValue {
    /// A JSON object of the values' JSON forms.
    public var cohorlyValue: CohorlyValue { .object(mapValues(\.cohorlyValue)) }
}

extension Dictionary where Key == String, Value == any CohorlyPropertyValue {
    /// The properties as JSON values (what the client stores and sends).
    package var cohorlyProperties: Properties { mapValues(\.cohorlyValue) }
}
