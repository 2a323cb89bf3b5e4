import CCrashRecorder
import Cohorly

/// Facts about this launch's device, computed once, for the crash-time context: the client's automatic
/// properties (`$lib`, `$lib_version`, `$os`, `$os_version`, `$os_distribution`, `$kernel_version`, `$arch`)
/// plus `$hostname`, `$app_name` and `$app_start_ms`, kept as the JSON members the context starts with.
///
/// Read and written as JSON members by the recorder's C side (`cly_device_facts_read`: os-release, uname,
/// /proc; `cly_device_facts_json`, the report writer's escaping) rather than gathered with Swift strings into a
/// dictionary: install computes them, and Swift's generic string splitting, dictionary and integer
/// parsing/formatting code would page in ~200 KiB for it. The values are the
/// ones `AutomaticProperties` gives the client's events (DeviceInfoTests checks that they agree).
struct DeviceInfo: Sendable {
    static let current = DeviceInfo()

    /// The facts as JSON object members, keys sorted, without the braces: `"$app_name":"…",…`.
    let jsonMembers: String

    init(osReleasePath: String = "/etc/os-release") {
        var facts = cly_device_facts()
        cly_device_facts_read(osReleasePath, &facts)
        var buffer = [CChar](repeating: 0, count: Int(CLY_MAX_CONTEXT))
        let length = cly_device_facts_json(
            &facts, AutomaticProperties.libraryName, AutomaticProperties.libraryVersion, &buffer, buffer.count)
        jsonMembers = buffer.withUnsafeBufferPointer { characters in
            characters.withMemoryRebound(to: UInt8.self) { String(decoding: $0.prefix(length), as: UTF8.self) }
        }
    }
}
