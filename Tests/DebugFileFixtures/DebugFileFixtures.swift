import Foundation

/// A small C program compiled with `-g` once per test process, then split as a release pipeline does:
/// `objcopy --only-keep-debug`, `strip`, `objcopy --add-gnu-debuglink`. Everything lives in one scratch
/// directory per process (removed by the OS's temp cleanup; names carry the pid). Shared by the test targets
/// that upload debug files (CohorlyCollectorTests, CohorlyUploadTests).
package struct SplitProgram: Sendable {
    /// The directory holding the files.
    package let directory: String
    /// The program as linked, with DWARF and symbols.
    package var full: String { directory + "/prog" }
    /// The stripped program with a `.gnu_debuglink` to `prog.debug`.
    package var stripped: String { directory + "/prog.stripped" }
    /// The separate debug file.
    package var debug: String { directory + "/prog.debug" }
    /// The GNU build id (lowercase hex), read with `readelf -n`.
    package let buildId: String

    package static let shared: Result<SplitProgram, FixtureError> = Result { try build() }.mapError {
        $0 as? FixtureError ?? FixtureError(reason: "\($0)")
    }

    package static func get() throws -> SplitProgram { try shared.get() }

    /// A fresh scratch directory for one test, under `<tmp>/cohorly-debugfile-tests-<pid>` (removed when the test
    /// process exits). Directories of earlier test processes that are no longer running (killed before they
    /// could) are removed on first use.
    package static func scratch(_ name: String) -> String {
        let path = root + "/" + name + "-" + UUID().uuidString.prefix(8)
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static let prefix = "cohorly-debugfile-tests-"

    private static let root: String = {
        let temporary = NSTemporaryDirectory()
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(atPath: temporary + name) }
        }
        atexit { try? FileManager.default.removeItem(atPath: SplitProgram.root) }
        return temporary + prefix + "\(getpid())"
    }()

    private static func build() throws -> SplitProgram {
        let directory = scratch("program")
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/symbols/inline.c").path
        let full = directory + "/prog"
        try run("/opt/swift/usr/bin/clang", ["-O1", "-g", "-Wl,--build-id", source, "-o", full])
        try run("/usr/bin/objcopy", ["--only-keep-debug", full, full + ".debug"])
        try run("/usr/bin/strip", ["-o", full + ".stripped", full])
        try run("/usr/bin/objcopy", ["--add-gnu-debuglink=" + full + ".debug", full + ".stripped"])
        let notes = try run("/usr/bin/readelf", ["-n", full])
        guard let line = notes.split(separator: "\n").first(where: { $0.contains("Build ID:") }),
            let id = line.split(separator: " ").last
        else { throw FixtureError(reason: "no build id in readelf -n output") }
        return SplitProgram(directory: directory, buildId: String(id))
    }

    /// Runs a tool; returns its stdout; throws when it exits non-zero.
    @discardableResult
    package static func run(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws
        -> String
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError(reason: "\(path) \(arguments) exited \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A fixture could not be built.
package struct FixtureError: Error, CustomStringConvertible {
    package let reason: String
    package var description: String { reason }

    /// A fixture that could not be built, and why.
    package init(reason: String) { self.reason = reason }
}

/// Bytes of a file (test files are small).
package func contents(_ path: String) -> [UInt8] {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
}
