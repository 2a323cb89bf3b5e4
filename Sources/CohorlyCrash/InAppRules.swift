/// Which frames of a crashed process are the app's own (`in_app: true`).
///
/// PostHog and Sentry group a crash by its in-app frames, and the collector keys issues and names culprits by
/// them, so this decides what an issue is made of. First by image: an image whose file name or path starts with
/// one of ``include`` is in the app; else one that starts with one of ``exclude`` is not; else the Swift
/// runtime, Foundation, libdispatch, libc and the other system libraries (by file name, wherever they were
/// loaded from) are not; else the executable and the libraries in its directory (or below it) are; everything
/// else is not. Then, for a frame named on the device, by its code (``AppCode``, the crash model's one rule):
/// a server's executable also holds its framework, NIO, swift-log and the compiler's thunks, so a frame is
/// in-app only when one of its functions is the app's — by Swift module (``includeModules`` and
/// ``excludeModules`` first) and by source file (under the root package's directory, found from the DWARF of
/// the executable's `main`, and not under `.build/checkouts/`). A frame left raw keeps its image's answer.
public struct InAppRules: Sendable, Equatable, Codable {
    /// File-name or path prefixes of images that are always in the app (default none). Wins over ``exclude``.
    public var include: [String]
    /// File-name or path prefixes of images that are never in the app (default none).
    public var exclude: [String]
    /// Swift modules that are always the app's, wherever their sources are (default none): a package of your
    /// own fetched as a dependency. Wins over ``excludeModules`` and over the image rules.
    public var includeModules: [String]
    /// Swift modules that are never the app's (default none): a local package inside your package's directory.
    public var excludeModules: [String]

    /// Rules with these overrides.
    public init(
        include: [String] = [], exclude: [String] = [], includeModules: [String] = [], excludeModules: [String] = []
    ) {
        self.include = include
        self.exclude = exclude
        self.includeModules = includeModules
        self.excludeModules = excludeModules
    }

    /// Reads rules written by this or an earlier SDK (which had no module lists).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        include = try container.decodeIfPresent([String].self, forKey: .include) ?? []
        exclude = try container.decodeIfPresent([String].self, forKey: .exclude) ?? []
        includeModules = try container.decodeIfPresent([String].self, forKey: .includeModules) ?? []
        excludeModules = try container.decodeIfPresent([String].self, forKey: .excludeModules) ?? []
    }

    /// The code rule for a program whose root package directory is `sourceRoot` (nil: unknown).
    public func appCode(sourceRoot: String?) -> AppCode {
        AppCode(sourceRoot: sourceRoot, includeModules: includeModules, excludeModules: excludeModules)
    }

    /// File-name prefixes of the runtime and system libraries a Swift app on Linux loads.
    static let systemPrefixes = [
        "libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime", "libicu", "libc.so",
        "libc-", "libm.so", "libm-", "libpthread", "libdl.so", "librt.so", "ld-linux", "ld64.so", "linux-vdso",
        "libstdc++", "libgcc_s", "libunwind", "liblzma", "libz.so", "libcurl", "libssl", "libcrypto", "libxml2",
        "libsqlite3", "libdw", "libelf", "libsystemd", "libresolv", "libnss_", "libgnutls", "libnghttp",
    ]

    /// Whether the image at `path` is the app's, for a process whose executable is `executable`.
    public func isInApp(path: String, executable: String) -> Bool {
        let name = Self.fileName(path)
        func matches(_ prefixes: [String]) -> Bool {
            prefixes.contains { !$0.isEmpty && (name.hasPrefix($0) || path.hasPrefix($0)) }
        }
        if matches(include) { return true }
        if matches(exclude) || Self.systemPrefixes.contains(where: name.hasPrefix) { return false }
        if path == executable { return true }
        let directory = Self.directory(executable)
        return !directory.isEmpty && path.hasPrefix(directory + "/")
    }

    /// The last path component (`/usr/lib/libc.so.6` → `libc.so.6`).
    static func fileName(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
    }

    /// The directory part without the trailing slash; empty when there is none.
    static func directory(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }
}
