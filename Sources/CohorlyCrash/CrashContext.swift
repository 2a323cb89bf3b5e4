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
    /// the properties make it larger, the free-form properties are left out, then the super properties).
    func serializedForCrash() -> String {
        var members = DeviceInfo.current.fields
        if let release { members["release"] = .string(release) }
        if let dist { members["dist"] = .string(dist) }
        if let distinctId { members["distinct_id"] = .string(distinctId) }
        members[Self.propertiesKey] = .object(properties.mapValues(CohorlyValue.string))
        members[Self.superPropertiesKey] = .object(superProperties)
        let flags = flagMembers()
        members.merge(flags) { _, flag in flag }
        for dropped in [Self.propertiesKey, Self.superPropertiesKey] {
            let json = CohorlyValue.object(members).jsonString
            if json.utf8.count <= Int(CLY_MAX_CONTEXT) { return json }
            members[dropped] = .object([:])
        }
        // Still too large: the flags go too.
        for key in flags.keys { members[key] = nil }
        return CohorlyValue.object(members).jsonString
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

/// Facts about this launch's device, computed once.
struct DeviceInfo: Sendable {
    static let current = DeviceInfo()

    let fields: Properties

    private init() {
        var fields = AutomaticProperties().values
        var uts = utsname()
        uname(&uts)
        fields["$hostname"] = .string(
            withUnsafeBytes(of: uts.nodename) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        if let start = Self.processStartMilliseconds() { fields["$app_start_ms"] = .int(Int(start)) }
        fields["$app_name"] = .string(String(CommandLine.arguments.first?.split(separator: "/").last ?? ""))
        self.fields = fields
    }

    /// When this process started (unix ms), from /proc/self/stat and the boot time in /proc/stat.
    static func processStartMilliseconds() -> UInt64? {
        guard let stat = AutomaticProperties.readSmallFile("/proc/self/stat"),
            let close = stat.lastIndex(of: ")"),
            let system = AutomaticProperties.readSmallFile("/proc/stat"),
            let bootLine = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let bootSeconds = UInt64(bootLine.dropFirst(6))
        else { return nil }
        // Fields after the command name; starttime is field 22 of the whole line (20th after the name).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = UInt64(fields[19]) else { return nil }
        let ticksPerSecond = UInt64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        return bootSeconds * 1000 + ticks * 1000 / ticksPerSecond
    }
}
