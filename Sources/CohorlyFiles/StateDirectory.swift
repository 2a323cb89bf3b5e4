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
