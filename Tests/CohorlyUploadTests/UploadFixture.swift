import CohorlyCollector
import Foundation

/// A small C program compiled with `-g` once per test process and its separate debug file
/// (`objcopy --only-keep-debug`), in a scratch directory of this process; and a collector on loopback.
struct UploadFixture: Sendable {
    /// The directory holding the files.
    let directory: String
    /// The program as linked, with DWARF and symbols.
    var full: String { directory + "/prog" }
    /// The separate debug file.
    var debug: String { directory + "/prog.debug" }
    /// The program stripped (symbols and DWARF gone, its build id kept).
    var stripped: String { directory + "/prog.stripped" }
    /// The GNU build id (lowercase hex), read with `readelf -n`.
    let buildId: String

    static let shared: Result<UploadFixture, FixtureError> = Result { try build() }.mapError {
        $0 as? FixtureError ?? FixtureError(reason: "\($0)")
    }

    static func get() throws -> UploadFixture { try shared.get() }

    struct FixtureError: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    private static func build() throws -> UploadFixture {
        let directory = NSTemporaryDirectory() + "cohorly-upload-tests-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        atexit {
            try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "cohorly-upload-tests-\(getpid())")
        }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/symbols/inline.c").path
        let full = directory + "/prog"
        try run("/opt/swift/usr/bin/clang", ["-O1", "-g", "-Wl,--build-id", source, "-o", full])
        try run("/usr/bin/objcopy", ["--only-keep-debug", full, full + ".debug"])
        try run("/usr/bin/strip", ["-o", full + ".stripped", full])
        let notes = try run("/usr/bin/readelf", ["-n", full])
        guard let line = notes.split(separator: "\n").first(where: { $0.contains("Build ID:") }),
            let id = line.split(separator: " ").last
        else { throw FixtureError(reason: "no build id in readelf -n output") }
        return UploadFixture(directory: directory, buildId: String(id))
    }

    /// Runs a tool; returns its stdout; throws when it exits non-zero.
    @discardableResult
    static func run(_ path: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
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

    /// Runs `script` with Python 3 (an independent implementation to check against) and `arguments`.
    static func python(_ script: String, _ arguments: [String]) throws -> String {
        try run("/usr/bin/python3", ["-c", script] + arguments)
    }

    /// A collector on an ephemeral loopback port, in memory, whose secret is `secret`.
    static func collector(secret: String) throws -> Collector {
        var configuration = CollectorConfiguration()
        configuration.adminToken = secret
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        return collector
    }
}
