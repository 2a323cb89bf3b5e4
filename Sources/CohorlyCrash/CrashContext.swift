import CCrashRecorder
import Cohorly

#if canImport(Glibc)
    import Glibc
#endif

/// The crash-time context: what a report says about the launch that crashed.
///
/// The app sets ``release``, ``distinctId`` and free-form ``properties`` (CohorlyCrash keeps the distinct id in
/// step with `identify()` and `reset()`, and ``superProperties`` in step with `register()`, `unregister()` and
/// `reset()`); the device fields — the client's automatic properties (`$os`,
/// `$os_version`, `$kernel_version`, `$arch`, `$lib`, `$lib_version`) plus `$hostname`, `$app_start_ms` and
/// `$app_name` — are added when the context is handed to the recorder.
public struct CrashContext: Sendable, Equatable, Codable {
    /// The release, e.g. `MyApp@1.2.0` (default nil).
    public var release: String?
    /// The distribution of the release (default nil).
    public var dist: String?
    /// The user the crash happened to (default nil).
    public var distinctId: String?
    /// Free-form string pairs (default empty).
    public var properties: [String: String]
    /// The client's super properties (`register()`), as they are now (default empty): a crash event carries
    /// the values they had when the crash happened.
    public var superProperties: Properties
    /// The feature flags the launch was served, key → value (a variant's name or a boolean; default empty):
    /// a crash event carries them as `$active_feature_flags` (the keys that are on) and `$feature/<key>`, at
    /// most ``maxFeatureFlags`` of them (by key).
    public var featureFlags: Properties = [:]

    /// The most flags a crash context carries: 50.
    public static let maxFeatureFlags = 50

    /// The key of ``properties`` in the serialized context.
    static let propertiesKey = "properties"
    /// The key of ``superProperties`` in the serialized context.
    static let superPropertiesKey = "super_properties"

    /// An empty context.
    public init(
        release: String? = nil, dist: String? = nil, distinctId: String? = nil, properties: [String: String] = [:],
        superProperties: Properties = [:]
    ) {
        self.release = release
        self.dist = dist
        self.distinctId = distinctId
        self.properties = properties
        self.superProperties = superProperties
    }

    /// The JSON object the recorder copies into a report's `context` (at most CLY_MAX_CONTEXT bytes: when
    /// the properties make it larger, the free-form properties are left out, then the super properties and
    /// the flags).
    ///
    /// Written member by member (the device facts first, as DeviceInfo prepared them), not through one merged
    /// dictionary: install serializes the context, and an app's context at install is mostly a release and a
    /// distinct id, which then cost no dictionary, sorting or number formatting code (~250 KiB of code pages
    /// on first use). Members are in a fixed order; the collections inside are written with sorted keys.
    func serializedForCrash() -> String {
        let flags = flagMembers()
        let full = serialized(properties: true, superProperties: true, flags: flags)
        if full.utf8.count <= Int(CLY_MAX_CONTEXT) { return full }
        let withoutProperties = serialized(properties: false, superProperties: true, flags: flags)
        if withoutProperties.utf8.count <= Int(CLY_MAX_CONTEXT) { return withoutProperties }
        // Still too large: the super properties and the flags go too.
        return serialized(properties: false, superProperties: false, flags: [:])
    }

    /// The context with or without its collections.
    private func serialized(properties withProperties: Bool, superProperties withSuper: Bool, flags: Properties)
        -> String
    {
        var out = "{" + DeviceInfo.current.jsonMembers
        func member(_ key: String) {
            out += ",\""
            out += key
            out += "\":"
        }
        if let release {
            member("release")
            CohorlyValue.writeString(release, into: &out)
        }
        if let dist {
            member("dist")
            CohorlyValue.writeString(dist, into: &out)
        }
        if let distinctId {
            member("distinct_id")
            CohorlyValue.writeString(distinctId, into: &out)
        }
        member(Self.propertiesKey)
        if withProperties && !properties.isEmpty {
            CohorlyValue.object(properties.mapValues(CohorlyValue.string)).write(into: &out)
        } else {
            out += "{}"
        }
        member(Self.superPropertiesKey)
        if withSuper && !superProperties.isEmpty {
            CohorlyValue.object(superProperties).write(into: &out)
        } else {
            out += "{}"
        }
        for key in flags.isEmpty ? [] : flags.keys.sorted() {
            guard let value = flags[key] else { continue }
            out += ","
            CohorlyValue.writeString(key, into: &out)
            out += ":"
            value.write(into: &out)
        }
        out += "}"
        return out
    }

    /// `$active_feature_flags` (keys whose value is `true` or a non-empty variant) and `$feature/<key>` for the
    /// first ``maxFeatureFlags`` flags by key.
    func flagMembers() -> Properties {
        guard !featureFlags.isEmpty else { return [:] }
        var members: Properties = [:]
        var active: [CohorlyValue] = []
        for key in featureFlags.keys.sorted().prefix(Self.maxFeatureFlags) {
            guard let value = featureFlags[key] else { continue }
            members["$feature/" + key] = value
            switch value {
            case .bool(true): active.append(.string(key))
            case .string(let variant) where !variant.isEmpty: active.append(.string(key))
            default: break
            }
        }
        members["$active_feature_flags"] = .array(active)
        return members
    }
}
