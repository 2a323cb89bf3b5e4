// Properties whose values are Swift values (variables of `CohorlyPropertyValue` types), next to the
// `Properties` (`[String: CohorlyValue]`) forms that literals such as `["a": nil, "b": [1, "x"]]` use. Each one
// converts on the caller's thread and calls the `Properties` form.

extension Cohorly {
    /// Queues an event whose property values are Swift values:
    /// `track("Checkout", properties: ["plan": plan, "seats": seats, "at": Date(), "tags": tags])`.
    /// Values convert as ``CohorlyPropertyValue`` says (a `nil` optional is `null`, a `Date` ISO 8601 text).
    public func track(_ event: String, properties: [String: any CohorlyPropertyValue]) {
        track(event, properties: properties.cohorlyProperties)
    }

    /// `identify(_:)`, also setting profile properties whose values are Swift values (`set`: `$set`, `setOnce`:
    /// `$set_once`, default none).
    public func identify(
        _ distinctId: String, set: [String: any CohorlyPropertyValue],
        setOnce: [String: any CohorlyPropertyValue] = [:]
    ) {
        identify(distinctId, set: set.cohorlyProperties, setOnce: setOnce.cohorlyProperties)
    }

    /// Adds super properties whose values are Swift values (persisted, merged into every later event).
    public func register(_ properties: [String: any CohorlyPropertyValue]) {
        register(properties.cohorlyProperties)
    }
}

extension People {
    /// Sets profile properties (`$set`) whose values are Swift values.
    public func set(_ properties: [String: any CohorlyPropertyValue]) { set(properties.cohorlyProperties) }

    /// Sets profile properties only where they are not set yet (`$set_once`), values as Swift values.
    public func setOnce(_ properties: [String: any CohorlyPropertyValue]) { setOnce(properties.cohorlyProperties) }
}
