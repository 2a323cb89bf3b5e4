import CohorlyJSON
import Foundation

/// A feature flag as the collector stores it and `GET /flags/local-evaluation` serves it (cohorly-api.md §5):
/// `{key, name, active, variants:[{key, payload?, rolloutPct}], rules:[{distinctIds?, rolloutPct, variant?}],
/// localEvaluable}`, plus `payload` for a flag without variants (ours: served when such a flag matches).
package struct FlagDefinition: Sendable, Hashable {
    /// One variant of a multivariate flag.
    package struct Variant: Sendable, Hashable {
        package var key: String
        package var rolloutPct: Double
        package var payload: CohorlyValue?

        /// A variant with `rolloutPct` percent of the matched users.
        package init(key: String, rolloutPct: Double, payload: CohorlyValue? = nil) {
            self.key = key
            self.rolloutPct = rolloutPct
            self.payload = payload
        }
    }

    /// One targeting rule; rules are tried in order and the first match wins.
    package struct Rule: Sendable, Hashable {
        /// Only these ids match (nil: everyone).
        package var distinctIds: [String]?
        /// The share of the matching ids let in, 0…100.
        package var rolloutPct: Double
        /// The variant a match gets (nil: chosen by the variant hash).
        package var variant: String?

        /// A rule for `distinctIds` (nil: everyone) letting in `rolloutPct` percent, with `variant` pinned or not.
        package init(distinctIds: [String]? = nil, rolloutPct: Double, variant: String? = nil) {
            self.distinctIds = distinctIds
            self.rolloutPct = rolloutPct
            self.variant = variant
        }
    }

    package var key: String
    package var name: String
    package var active: Bool
    package var variants: [Variant]
    package var rules: [Rule]
    package var payload: CohorlyValue?

    /// A definition; `validated()` checks it.
    package init(
        key: String, name: String? = nil, active: Bool = true, variants: [Variant] = [], rules: [Rule] = [],
        payload: CohorlyValue? = nil
    ) {
        self.key = key
        self.name = name ?? key
        self.active = active
        self.variants = variants
        self.rules = rules
        self.payload = payload
    }

    /// Why the definition cannot be stored, or nil: a key of 1–200 characters, percentages within 0…100,
    /// variant names unique and their shares summing to exactly 100, a rule's variant one of them.
    package var problem: String? {
        guard !key.isEmpty, key.count <= 200 else { return "a flag key must have 1 to 200 characters" }
        guard !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "/" }) else {
            return "a flag key cannot contain '/' or control characters"
        }
        for variant in variants {
            guard !variant.key.isEmpty, (0...100).contains(variant.rolloutPct) else {
                return "variant '\(variant.key)': a name and a share from 0 to 100 are needed"
            }
        }
        guard Set(variants.map(\.key)).count == variants.count else { return "variant names must be unique" }
        if !variants.isEmpty {
            let total = variants.reduce(0) { $0 + $1.rolloutPct }
            guard abs(total - 100) < 1e-9 else { return "variant shares add up to \(total), not 100" }
        }
        for (index, rule) in rules.enumerated() {
            guard (0...100).contains(rule.rolloutPct) else { return "rule \(index): rollout must be 0 to 100" }
            if let variant = rule.variant, !variants.contains(where: { $0.key == variant }) {
                return "rule \(index): no variant '\(variant)'"
            }
        }
        return nil
    }

    // MARK: JSON

    /// The definition as stored and served by `GET /flags/local-evaluation`.
    package var json: CohorlyValue {
        var object: [String: CohorlyValue] = [
            "key": .string(key), "name": .string(name), "active": .bool(active), "localEvaluable": true,
            "variants": .array(
                variants.map { variant in
                    var member: [String: CohorlyValue] = [
                        "key": .string(variant.key), "rolloutPct": Self.number(variant.rolloutPct),
                    ]
                    if let payload = variant.payload { member["payload"] = payload }
                    return .object(member)
                }),
            "rules": .array(
                rules.map { rule in
                    var member: [String: CohorlyValue] = ["rolloutPct": Self.number(rule.rolloutPct)]
                    if let ids = rule.distinctIds { member["distinctIds"] = .array(ids.map { .string($0) }) }
                    if let variant = rule.variant { member["variant"] = .string(variant) }
                    return .object(member)
                }),
        ]
        if let payload { object["payload"] = payload }
        return .object(object)
    }

    private static func number(_ value: Double) -> CohorlyValue {
        value.rounded() == value && abs(value) <= 100 ? .int(Int(value)) : .double(value)
    }

    /// A definition from its JSON (`json`'s shape), or why it is not one.
    package init(json: CohorlyValue) throws(FlagDefinitionError) {
        guard let key = json["key"]?.stringValue else { throw FlagDefinitionError("a flag needs a string \"key\"") }
        func percentage(_ value: CohorlyValue?, _ what: String) throws(FlagDefinitionError) -> Double {
            guard let number = value?.doubleValue else {
                throw FlagDefinitionError("\(what) needs a numeric rolloutPct")
            }
            return number
        }
        var variants: [Variant] = []
        for item in json["variants"]?.arrayValue ?? [] {
            guard let name = item["key"]?.stringValue else { throw FlagDefinitionError("a variant needs a \"key\"") }
            variants.append(
                Variant(
                    key: name, rolloutPct: try percentage(item["rolloutPct"], "variant '\(name)'"),
                    payload: item["payload"]))
        }
        var rules: [Rule] = []
        for item in json["rules"]?.arrayValue ?? [] {
            var ids: [String]?
            if let list = item["distinctIds"] {
                guard let array = list.arrayValue?.compactMap(\.stringValue), array.count == list.arrayValue?.count
                else { throw FlagDefinitionError("a rule's distinctIds must be strings") }
                ids = array
            }
            rules.append(
                Rule(
                    distinctIds: ids, rolloutPct: try percentage(item["rolloutPct"], "a rule"),
                    variant: item["variant"]?.stringValue))
        }
        var active = true
        if let flag = json["active"] {
            guard case .bool(let value) = flag else { throw FlagDefinitionError("\"active\" must be a boolean") }
            active = value
        }
        self.init(
            key: key, name: json["name"]?.stringValue, active: active, variants: variants, rules: rules,
            payload: json["payload"])
        if let problem { throw FlagDefinitionError(problem) }
    }
}

/// Why a flag definition was refused.
package struct FlagDefinitionError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
