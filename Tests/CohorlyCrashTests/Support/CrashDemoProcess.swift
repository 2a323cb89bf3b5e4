import CohorlyCrash
import Foundation
import TestWaiting

/// A CrashDemo child process run to its end, with the reports it left.
struct CrashDemoRun {
    /// The signal that killed it, or nil when it exited.
    var signal: Int32?
    /// Its exit status when it exited normally.
    var exitStatus: Int32?
    var stdout: String
    var stderr: String
    /// The report directory it used.
    var reportDirectory: URL

    /// Every committed report file.
    var reportFiles: [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: reportDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().map {
            reportDirectory.appendingPathComponent($0)
        }
    }

    /// Files still named `.tmp`.
    var tornFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: reportDirectory.path)) ?? []).filter {
            $0.hasSuffix(".tmp")
        }
    }

    /// Decodes every committed report through the store.
    func reports() throws -> [CrashReport] {
        let store = CrashReportStore(directory: reportDirectory)
        return try store.pendingReports().map { try store.load($0) }
    }
}

/// Builds of CrashDemo the tests run.
enum DemoBuild: String, CaseIterable, CustomStringConvertible, Sendable {
    case debug, release

    var description: String { rawValue }

    /// `.build/<triple>/<debug|release>/CrashDemo`, next to the test bundle's own build directory.
    var executable: URL {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        while directory.lastPathComponent != "debug" && directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.deletingLastPathComponent().appendingPathComponent("\(rawValue)/CrashDemo")
    }
}

/// A fresh temporary directory, removed by the caller.
func makeTemporaryDirectory(_ label: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "cohorly-\(label)-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

enum CrashDemoError: Error, CustomStringConvertible {
    case missingExecutable(URL)
    var description: String {
        switch self {
        case .missingExecutable(let url):
            "\(url.path) is missing: run scripts/test (it builds CrashDemo in release too)"
        }
    }
}

/// Runs CrashDemo with `arguments` (plus `--report-dir`) and waits for it to end.
/// The Swift backtracer is off unless `backtracer` is true (it is slow, and only some tests are about it).
/// A crash starts no sender unless `senderAtCrash` is true: most tests look at the report the crash left (and at
/// what the next launch makes of it), which a sender started at the crash would send and delete meanwhile.
func runCrashDemo(
    _ arguments: [String], build: DemoBuild = .debug, executable path: URL? = nil, reportDirectory: URL? = nil,
    backtracer: Bool = false,
    label: String = "run", withClient: Bool = false, environment extra: [String: String] = [:],
    umask: String? = nil, senderAtCrash: Bool = false
) async throws -> CrashDemoRun {
    let executable = path ?? build.executable
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
        throw CrashDemoError.missingExecutable(executable)
    }
    let directory = try reportDirectory ?? makeTemporaryDirectory(label)
    let outputs = try makeTemporaryDirectory("output")
    defer { try? FileManager.default.removeItem(at: outputs) }
    let stdoutURL = outputs.appendingPathComponent("stdout")
    let stderrURL = outputs.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
    let process = Process()
    process.executableURL = executable
    process.arguments =
        arguments + ["--report-dir", directory.path]
        + (withClient ? (senderAtCrash ? [] : ["--no-sender-at-crash"]) : ["--recorder-only"])
    if let umask {  // the umask is per process: the shell sets it, then becomes the demo
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "umask \(umask) && exec \"$0\" \"$@\"", executable.path] + (process.arguments ?? [])
    }
    var environment = ProcessInfo.processInfo.environment
    environment["SWIFT_BACKTRACE"] = backtracer ? "enable=yes,interactive=no" : "enable=no"
    environment.merge(extra) { _, new in new }
    process.environment = environment
    process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
    process.standardError = try FileHandle(forWritingTo: stderrURL)
    try await runToEnd(process)
    let signaled = process.terminationReason == .uncaughtSignal
    return CrashDemoRun(
        signal: signaled ? process.terminationStatus : nil,
        exitStatus: signaled ? nil : process.terminationStatus,
        stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "",
        reportDirectory: directory)
}
