import Foundation

/// Runs the built `cohorly` binary (next to the test bundle in the build directory).
enum CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let path: String = {
        // .build/<triple>/debug/cohorlyPackageTests.xctest → .build/<triple>/debug/cohorly
        var url = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = url.appendingPathComponent("cohorly")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            url = url.deletingLastPathComponent()
        }
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
        return here.appendingPathComponent(".build/debug/cohorly").path
    }()

    static func run(
        _ arguments: [String], input: String = "", environment: [String: String]? = nil,
        executable: String? = nil, directory: String? = nil
    )
        throws -> Result
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable ?? path)
        process.arguments = arguments
        // The scratch directory by default: `debug-files find` searches the current directory.
        process.currentDirectoryURL = URL(fileURLWithPath: directory ?? Scratch.emptyDirectory)
        // Hermetic by default: no debuginfod servers from the developer's environment (Debian sets one).
        var inherited = ProcessInfo.processInfo.environment
        inherited["DEBUGINFOD_URLS"] = nil
        process.environment = environment ?? inherited
        let stdinPipe = Pipe()
        let outFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cohorly-out-\(UUID())")
        let errFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cohorly-err-\(UUID())")
        _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outFile)
            try? FileManager.default.removeItem(at: errFile)
        }
        let out = try FileHandle(forWritingTo: outFile)
        let err = try FileHandle(forWritingTo: errFile)
        process.standardInput = stdinPipe
        process.standardOutput = out
        process.standardError = err
        try process.run()
        stdinPipe.fileHandleForWriting.write(Data(input.utf8))
        try stdinPipe.fileHandleForWriting.close()
        process.waitUntilExit()
        try out.close()
        try err.close()
        return Result(
            status: process.terminationStatus,
            stdout: try String(contentsOf: outFile, encoding: .utf8),
            stderr: try String(contentsOf: errFile, encoding: .utf8))
    }
}
