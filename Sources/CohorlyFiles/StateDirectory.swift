#if canImport(Glibc)
    import Glibc
#endif

/// Where Cohorly keeps its state when no directory is given: one resolution for the client's queue, the
/// recorder's reports and the collector's data, so one app never writes to two trees. Foundation-free, like
/// ``PrivateFiles``.
///
/// `$XDG_STATE_HOME/cohorly` when `XDG_STATE_HOME` is an absolute path (the XDG rule: a relative value is
/// ignored), else `$HOME/.local/state/cohorly` when `HOME` is an absolute path, else the same under the password
/// file's home directory of the user, else under `/tmp`.
package enum StateDirectory {
    /// The path of the `cohorly` state directory, with `subdirectory` appended when given (`crashes`,
    /// `collector`). `environment` defaults to the process environment.
    package static func cohorly(_ subdirectory: String? = nil, environment: [String: String]? = nil) -> String {
        let lookup = { (name: String) -> String? in
            environment.map { $0[name] } ?? getenv(name).map { String(cString: $0) }
        }
        var root: String
        if let state = lookup("XDG_STATE_HOME"), state.hasPrefix("/") {
            root = state + "/cohorly"
        } else {
            let home = lookup("HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? passwordFileHome() ?? "/tmp"
            root = home + "/.local/state/cohorly"
        }
        if let subdirectory { root += "/" + subdirectory }
        return root
    }

    /// This executable's file name (`/proc/self/exe`, else `argv[0]`) as one path component: letters, digits, `.`,
    /// `_` and `-` kept, anything else `_`; "app" when nothing usable is left. What the per-app directories (the
    /// client's default queue, the recorder's default report directory) are named after.
    package static func appName(_ name: String? = nil) -> String {
        let bytes = (name ?? executableName()).utf8.prefix(128).map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return byte
            default: return UInt8(ascii: "_")
            }
        }
        guard bytes.contains(where: { $0 != UInt8(ascii: ".") }) else { return "app" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The file name of this executable (`/proc/self/exe`, a ` (deleted)` suffix removed), else `argv[0]`'s.
    package static func executableName() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.map { readlink("/proc/self/exe", $0, buffer.count - 1) } ?? -1
        }
        var path = count > 0 ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
        if path.isEmpty { path = CommandLine.arguments.first ?? "" }
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? "app" : name
    }

    /// The home directory the password database gives the current user (what `~` means without `HOME`).
    private static func passwordFileHome() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let directory = entry.pw_dir
        else { return nil }
        let home = String(cString: directory)
        return home.hasPrefix("/") ? home : nil
    }
}
