import CCrashRecorder
import Cohorly

/// Facts about this launch's device, computed once, for the crash-time context: the client's automatic
/// properties (`$lib`, `$lib_version`, `$os`, `$os_version`, `$os_distribution`, `$kernel_version`, `$arch`)
/// plus `$hostname`, `$app_name` and `$app_start_ms`, kept as the JSON members the context starts with.
///
/// Read by the recorder's C side (`cly_device_facts_read`: os-release, uname, /proc) and kept as JSON members
/// rather than gathered with Swift strings into a dictionary: install computes them, and the generic string
/// splitting, dictionary and integer parsing/formatting code would page in ~200 KiB for it. The values are the
/// ones `AutomaticProperties` gives the client's events (DeviceInfoTests checks that they agree).
struct DeviceInfo: Sendable {
    static let current = DeviceInfo()

    /// The facts as JSON object members, keys sorted, without the braces: `"$app_name":"…",…`.
    let jsonMembers: String

    init(osReleasePath: String = "/etc/os-release") {
        var facts = cly_device_facts()
        cly_device_facts_read(osReleasePath, &facts)
        var out = ""
        func add(_ key: String, string value: String?) {
            guard let value else { return }
            if !out.isEmpty { out += "," }
            out += "\""
            out += key
            out += "\":"
            CohorlyValue.writeString(value, into: &out)
        }
        let startMs = Self.string(facts.start_ms_text)
        add("$app_name", string: Self.string(facts.app_name))
        if !startMs.isEmpty { out += ",\"$app_start_ms\":" + startMs }  // digits only (C formatted them)
        add("$arch", string: facts.has_uname ? Self.string(facts.arch) : nil)
        add("$hostname", string: Self.string(facts.hostname))
        add("$kernel_version", string: facts.has_uname ? Self.string(facts.kernel_version) : nil)
        add("$lib", string: AutomaticProperties.libraryName)
        add("$lib_version", string: AutomaticProperties.libraryVersion)
        add("$os", string: "Linux")
        let distribution = Self.string(facts.os_distribution)
        add("$os_distribution", string: distribution.isEmpty ? nil : distribution)
        let version = Self.string(facts.os_version)
        add("$os_version", string: version.isEmpty ? nil : version)
        jsonMembers = out
    }

    /// A NUL-terminated C character array as a string (invalid UTF-8 repaired).
    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
