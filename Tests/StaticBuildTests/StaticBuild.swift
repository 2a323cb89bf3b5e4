import Foundation
import TestWaiting

/// A statically linked build of CrashDemo, made once per test process into a scratch path of its own under
/// `.build` (static builds are slow: each recompiles the package; a later run rebuilds only what changed).
enum StaticBuild: String, CaseIterable, Sendable {
    /// `swift build --static-swift-stdlib`: the Swift runtime linked in (the Vapor and Hummingbird Dockerfiles'
    /// default), the system libraries still shared.
    case staticSwiftStdlib = "static-swift-stdlib"
    /// `swift build -Xswiftc -static-executable`: nothing shared, not even libc.
    case staticExecutable = "static-executable"

    var flags: [String] {
        switch self {
        case .staticSwiftStdlib: ["--static-swift-stdlib"]
        case .staticExecutable: ["-Xswiftc", "-static-executable"]
        }
    }

    /// The checkout: the directory above `.build`, where the test binary runs from.
    static var packageRoot: URL {
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        while directory.lastPathComponent != ".build" && directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        return directory.deletingLastPathComponent()
    }

    var scratchPath: URL { Self.packageRoot.appendingPathComponent(".build/\(rawValue)") }

    /// The CrashDemo executable of this build, built (once per process) when asked for the first time.
    func executable() async throws -> URL {
        try await StaticBuilds.shared.build(self)
    }
}

/// Why a static build failed: the command and what it printed.
struct StaticBuildFailure: Error, CustomStringConvertible {
    let command: String
    let output: String
    var description: String { "\(command) failed:\n\(output.suffix(4000))" }
}

/// The static builds of this test process: each is made at most once, and tests asking meanwhile wait for it.
actor StaticBuilds {
    static let shared = StaticBuilds()
    private var builds: [StaticBuild: Task<URL, any Error>] = [:]

    func build(_ build: StaticBuild) async throws -> URL {
        if let running = builds[build] { return try await running.value }
        let task = Task { try await Self.make(build) }
        builds[build] = task
        return try await task.value
    }

    private static func make(_ build: StaticBuild) async throws -> URL {
        let arguments =
            ["build", "--product", "CrashDemo", "--scratch-path", build.scratchPath.path] + build.flags
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift"] + arguments
        process.currentDirectoryURL = StaticBuild.packageRoot
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let printed = try await runReadingToEnd(process, reading: output)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw StaticBuildFailure(
                command: "swift " + arguments.joined(separator: " "), output: String(decoding: printed, as: UTF8.self))
        }
        return build.scratchPath.appendingPathComponent("debug/CrashDemo")
    }
}
