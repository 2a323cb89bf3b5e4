#if canImport(Glibc)
    import Glibc
#endif

/// `cohorly symbolicate --exe` hands its work to `cohorly-symbolicate`, the same code without Foundation, when
/// that executable sits beside this one: the process is replaced (``exec(_:)``), so the lean one reads the same
/// standard input and its exit status is the command's. Without it (a `cohorly` copied alone), or when it cannot
/// be run, the command runs in this process and prints the same output.
enum SymbolicateHandover {
    /// The lean executable's file name, looked for in the directory of the running `cohorly`.
    static let executableName = "cohorly-symbolicate"

    /// Replaces this process with `cohorly-symbolicate` given `arguments` (those after `symbolicate`). Returns
    /// only when that is not possible (no such file beside `/proc/self/exe`, not executable, exec failed).
    static func exec(_ arguments: [String]) {
        guard let path = besideSelf(executableName), access(path, X_OK) == 0 else { return }
        let argv = ([path] + arguments).map { strdup($0) }
        defer { argv.forEach { free($0) } }
        guard !argv.contains(where: { $0 == nil }) else { return }
        var pointers = argv + [nil]
        pointers.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            _ = execv(path, base)
        }
        // Only reached when execv failed: the caller goes on in this process.
    }

    /// `name` in the directory of the running executable (`/proc/self/exe`, symbolic links resolved).
    static func besideSelf(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0, length < buffer.count - 1 else { return nil }
        let bytes = buffer[0..<length].map { UInt8(bitPattern: $0) }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        return String(decoding: bytes[...slash], as: UTF8.self) + name
    }
}
