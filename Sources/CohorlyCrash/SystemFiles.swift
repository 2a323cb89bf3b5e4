#if canImport(Glibc)
    import Glibc
#endif

/// Small, Foundation-free file helpers for the install path (install must stay cheap: no Foundation
/// start-up cost in apps that do not use Foundation yet).
enum SystemFiles {
    /// The environment variable, or nil.
    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// The file name of this process's executable (`/proc/self/exe`, without the kernel's " (deleted)" mark when
    /// the file was replaced), else of `argv[0]`, else "app".
    static func executableName() -> String {
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
}
