import Foundation

/// A feature flag's value as reads return it: the variant's name for a multivariate flag, else whether the flag
/// is enabled. Literals build it, so `fallback: "control"` and `fallback: false` both read naturally.
public enum FeatureFlagValue: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral
{
    /// An on/off flag (or a disabled multivariate one).
    case bool(Bool)
    /// The variant served to this user.
    case variant(String)

    /// A variant value.
    public init(stringLiteral value: String) { self = .variant(value) }
    /// An on/off value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// The variant's name, when this is a variant.
    public var variantName: String? {
        if case .variant(let name) = self { return name }
        return nil
    }

    /// Whether the value counts as "on": `true`, or a non-empty variant name.
    public var isTruthy: Bool {
        switch self {
        case .bool(let value): return value
        case .variant(let name): return !name.isEmpty
        }
    }

    /// The value as `$feature_flag_response` reports it (the variant, else the boolean).
    public var propertyValue: CohorlyValue {
        switch self {
        case .bool(let value): return .bool(value)
        case .variant(let name): return .string(name)
        }
    }

    /// `true`, `false` or the variant's name.
    public var description: String {
        switch self {
        case .bool(let value): return String(value)
        case .variant(let name): return name
        }
    }
}

/// Where a flag read's value came from.
public enum FeatureFlagSource: String, Sendable, Hashable {
    /// An evaluation answered by the server during this session.
    case network
    /// The cache persisted by an earlier evaluation (possibly an earlier launch).
    case persistence
    /// The caller's fallback: the flag is unknown, or its cache may not be served under the policy.
    case fallback
}

/// How flag reads resolve against the persisted cache (`CohorlyOptions.flagPersistence`).
public enum FlagPersistence: Sendable, Hashable {
    /// Never reads nor writes the cache on the serving path (identity changes still remove it). Flags come only
    /// from network answers of this session; until one arrives (or when evaluations fail), reads give the fallback.
    case networkOnly
    /// Serves a cache inside `flagCacheTTL` until the network answers; a cache past the TTL is dropped, never
    /// served.
    case networkFirst
    /// Serves the cache at once (an expired one too, while inside `Cohorly.flagCacheMaxStale`); the first network
    /// success takes over and re-persists; a failed evaluation keeps the cache serving. The default.
    case persistenceUntilNetworkSuccess
}

/// A flag read with its provenance, as `getFeatureFlagDetails(_:fallback:)` returns it.
public struct FeatureFlagDetails: Sendable, Hashable {
    /// The flag's key.
    public var key: String
    /// The served value, or the fallback (nil when there was none).
    public var value: FeatureFlagValue?
    /// Where `value` came from.
    public var source: FeatureFlagSource
    /// Whether the flag is on (for a fallback: the fallback's truthiness).
    public var enabled: Bool
    /// The payload the flag (or its variant) carries; nil for a fallback.
    public var payload: CohorlyValue?
    /// When the served cache was written; nil unless `source == .persistence` (and nil for a legacy cache, which
    /// has no timestamp).
    public var persistedAt: Date?
    /// The cache lifetime (`flagCacheTTL`) in milliseconds; nil unless `source == .persistence`.
    public var ttlMs: Int?
}

/// One evaluated flag as a destination's answer carries it.
package struct EvaluatedFlag: Sendable, Hashable {
    package var enabled: Bool
    package var variant: String?
    package var payload: CohorlyValue?
    /// Extra `$feature_flag_called` properties the server's answer gives (a reason, an id, a version).
    package var exposureProperties: Properties = [:]

    package init(
        enabled: Bool, variant: String? = nil, payload: CohorlyValue? = nil, exposureProperties: Properties = [:]
    ) {
        self.enabled = enabled
        self.variant = variant
        self.payload = payload
        self.exposureProperties = exposureProperties
    }

    /// The value reads serve: the variant when enabled and multivariate, else `enabled`.
    package var value: FeatureFlagValue {
        if enabled, let variant { return .variant(variant) }
        return .bool(enabled)
    }
}

extension Cohorly {
    /// The default `flagCacheTTL`: 24 hours (the Mixpanel reference default shared by every Cohorly SDK).
    public static let defaultFlagCacheTTL: TimeInterval = 24 * 60 * 60
    /// The oldest a cache may be (since it was written) and still serve under `.persistenceUntilNetworkSuccess`
    /// once past its TTL: 7 days.
    public static let flagCacheMaxStale: TimeInterval = 7 * 24 * 60 * 60
}
