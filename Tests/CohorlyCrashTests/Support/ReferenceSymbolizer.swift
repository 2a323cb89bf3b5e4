import CohorlyCrash
import Foundation
import TestWaiting

/// The toolchain's llvm-symbolizer, used as the oracle for "which function is this frame in".
enum ReferenceSymbolizer {
    /// `llvm-symbolizer` next to the `swift` driver (the toolchain's, not an older system one).
    static var executable: URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        for directory in path.split(separator: ":") {
            let swift = URL(fileURLWithPath: String(directory)).appendingPathComponent("swift")
            if FileManager.default.isExecutableFile(atPath: swift.path) {
                let candidate = swift.resolvingSymlinksInPath().deletingLastPathComponent()
                    .appendingPathComponent("llvm-symbolizer")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        return URL(fileURLWithPath: "/usr/bin/llvm-symbolizer")
    }

    /// The function name (linkage name, as llvm-symbolizer prints it) of every frame of `thread`, using the
    /// module base and path recorded in `report`, each looked up by its kind (a return address at address − 1).
    static func functions(of thread: CrashReport.Thread, in report: CrashReport) async throws -> [String] {
        var lines: [String] = []
        for frame in thread.frames {
            guard let module = report.module(containing: frame) else {
                lines.append("\"/nonexistent\" 0x0")
                continue
            }
            let relative = frame.lookupAddress - module.base.value
            lines.append("\"\(module.path)\" 0x\(String(relative, radix: 16))")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--functions=linkage", "--demangle", "--no-inlines"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let text = Data((lines.joined(separator: "\n") + "\n").utf8)
        let data = try await offThePool {
            try process.run()
            input.fileHandleForWriting.write(text)
            try input.fileHandleForWriting.close()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        // Output: per address "function\nfile:line:col\n\n".
        let blocks = String(decoding: data, as: UTF8.self).components(separatedBy: "\n\n")
        return blocks.compactMap { $0.split(separator: "\n").first.map(String.init) }
    }
}
