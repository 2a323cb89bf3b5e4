import CCrashRecorder

#if canImport(Glibc)
    import Glibc
#endif

/// The crash-time context: what a report says about the launch that crashed.
///
/// The app sets ``release``, ``distinctId`` and free-form ``properties``; the device fields (OS, kernel,
/// architecture, host, app start, SDK) are added automatically when the context is handed to the recorder.
public struct CrashContext: Sendable, Equatable, Codable {
    /// The release, e.g. `MyApp@1.2.0` (default nil).
    public var release: String?
    /// The distribution of the release (default nil).
    public var dist: String?
    /// The user the crash happened to (default nil).
    public var distinctId: String?
    /// Free-form string pairs (default empty).
    public var properties: [String: String]

    /// An empty context.
    public init(
        release: String? = nil, dist: String? = nil, distinctId: String? = nil,
        properties: [String: String] = [:]
    ) {
        self.release = release
        self.dist = dist
        self.distinctId = distinctId
        self.properties = properties
    }

    /// The JSON object the recorder copies into a report's `context` (at most CLY_MAX_CONTEXT bytes: when
    /// the properties make it larger, they are left out).
    func serializedForCrash() -> String {
        var members = DeviceInfo.current.fields.mapValues(JSONText.string)
        if let release { members["release"] = JSONText.string(release) }
        if let dist { members["dist"] = JSONText.string(dist) }
        if let distinctId { members["distinct_id"] = JSONText.string(distinctId) }
        members["properties"] = JSONText.object(properties.mapValues(JSONText.string))
        let json = JSONText.object(members)
        if json.utf8.count <= Int(CLY_MAX_CONTEXT) { return json }
        members["properties"] = "{}"
        return JSONText.object(members)
    }
}

/// Facts about this launch's device, computed once.
struct DeviceInfo: Sendable {
    /// The SDK's name and version as reported in events.
    static let sdkName = "cohorly-swift-linux"
    static let sdkVersion = "0.1.0"

    static let current = DeviceInfo()

    let fields: [String: String]

    private init() {
        var uts = utsname()
        uname(&uts)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        let osRelease = Self.osRelease()
        fields = [
            "os": osRelease["NAME"] ?? "Linux",
            "os_version": osRelease["VERSION_ID"] ?? osRelease["VERSION"] ?? "",
            "kernel_version": field(uts.release),
            "arch": field(uts.machine),
            "hostname": field(uts.nodename),
            "app_start_ms": Self.processStartMilliseconds().map { String($0) } ?? "",
            "executable": String(CommandLine.arguments.first?.split(separator: "/").last ?? ""),
            "sdk_name": Self.sdkName,
            "sdk_version": Self.sdkVersion,
        ]
    }

    /// When this process started (unix ms), from /proc/self/stat and the boot time in /proc/stat.
    static func processStartMilliseconds() -> UInt64? {
        guard let stat = SystemFiles.read("/proc/self/stat"),
            let close = stat.lastIndex(of: ")"),
            let system = SystemFiles.read("/proc/stat"),
            let bootLine = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
            let bootSeconds = UInt64(bootLine.dropFirst(6))
        else { return nil }
        // Fields after the command name; starttime is field 22 of the whole line (20th after the name).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = UInt64(fields[19]) else { return nil }
        let ticksPerSecond = UInt64(max(sysconf(Int32(_SC_CLK_TCK)), 1))
        return bootSeconds * 1000 + ticks * 1000 / ticksPerSecond
    }

    /// The key/value pairs of /etc/os-release (quotes removed).
    static func osRelease(path: String = "/etc/os-release") -> [String: String] {
        guard let text = SystemFiles.read(path) else { return [:] }
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals])
            var value = String(line[line.index(after: equals)...])
            if value.count >= 2, value.first == "\"" || value.first == "'", value.last == value.first {
                value = String(value.dropFirst().dropLast())
            }
            result[key] = value
        }
        return result
    }
}
