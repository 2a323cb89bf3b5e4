import CohorlyCrash
import Foundation
import TestWaiting

/// Builds of CrashDemo the async-stack tests run: the crash matrix's two, plus a release build without frame
/// pointers (SwiftPM's `--omit-frame-pointers`, built by scripts/test into `.build/omit-frame-pointers`), where
/// a frame-pointer walk — the Swift runtime's backtracer — loses the async callers.
enum AsyncBuild: String, CaseIterable, CustomStringConvertible, Sendable {
    case debug
    case release
    case releaseWithoutFramePointers = "release-omit-frame-pointers"

    var description: String { rawValue }

    var executable: URL {
        switch self {
        case .debug: DemoBuild.debug.executable
        case .release: DemoBuild.release.executable
        case .releaseWithoutFramePointers:
            // `.build/<triple>/release/CrashDemo` -> `.build/omit-frame-pointers/release/CrashDemo`
            DemoBuild.release.executable.deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("omit-frame-pointers/release/CrashDemo")
        }
    }
}

/// A `cohorly-crash/2` report read as plain JSON (the package's reader of v2 is the crash model's; these tests
/// check what the C writer wrote), with its frames symbolicated by the toolchain's llvm-symbolizer.
struct AsyncReport {
    struct Frame: Equatable {
        var address: UInt64
        var kind: String
    }

    struct Chain: Equatable {
        var anchor: Int
        var stop: String
        var frames: [Frame]
    }

    struct Thread {
        var tid: Int
        var name: String
        var frames: [Frame]
        var async: Chain?
    }

    struct Module {
        var path: String
        var base: UInt64
        var size: UInt64
    }

    var format: String
    var pid: Int
    var crashed: Thread
    var others: [Thread]
    var modules: [Module]

    init(file: URL) throws {
        let data = try Data(contentsOf: file)
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let crashed = root["crashed_thread"] as? [String: Any]
        else { throw CocoaError(.fileReadCorruptFile) }
        format = root["format"] as? String ?? ""
        pid = root["pid"] as? Int ?? 0
        self.crashed = Self.thread(crashed)
        others = (root["threads"] as? [[String: Any]] ?? []).map(Self.thread)
        modules = (root["modules"] as? [[String: Any]] ?? []).map {
            Module(
                path: $0["path"] as? String ?? "", base: Self.hex($0["base"]), size: Self.hex($0["size"]))
        }
    }

    private static func hex(_ value: Any?) -> UInt64 {
        UInt64((value as? String ?? "").dropFirst(2), radix: 16) ?? 0
    }

    private static func frames(_ value: Any?) -> [Frame] {
        (value as? [[String: Any]] ?? []).map { Frame(address: hex($0["addr"]), kind: $0["kind"] as? String ?? "") }
    }

    private static func thread(_ object: [String: Any]) -> Thread {
        let chain = (object["async"] as? [String: Any]).map {
            Chain(anchor: $0["anchor"] as? Int ?? -1, stop: $0["stop"] as? String ?? "", frames: frames($0["frames"]))
        }
        return Thread(
            tid: object["tid"] as? Int ?? 0, name: object["name"] as? String ?? "", frames: frames(object["frames"]),
            async: chain)
    }

    /// The function (linkage name) of every frame, looked up by kind: `return_address` at address − 1, the
    /// others as is.
    func functions(_ frames: [Frame]) async throws -> [String] {
        let lines = frames.map { frame -> String in
            guard let module = modules.first(where: { frame.address &- $0.base < $0.size }) else {
                return "\"/nonexistent\" 0x0"
            }
            let relative = frame.address - module.base - (frame.kind == "return_address" ? 1 : 0)
            return "\"\(module.path)\" 0x\(String(relative, radix: 16))"
        }
        return try await symbolize(lines)
    }
}

/// llvm-symbolizer's function (linkage name) for each `"PATH" 0xOFFSET` line.
func symbolize(_ lines: [String]) async throws -> [String] {
    let process = Process()
    process.executableURL = ReferenceSymbolizer.executable
    process.arguments = ["--functions=linkage", "--no-inlines"]
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
    return String(decoding: data, as: UTF8.self).components(separatedBy: "\n\n").compactMap {
        $0.split(separator: "\n").first.map(String.init)
    }
}

/// Whether `expected` appear in `names` in this order (each a substring of a later name than the one before).
func appearInOrder(_ expected: [String], in names: [String]) -> Bool {
    var rest = names[...]
    for name in expected {
        guard let index = rest.firstIndex(where: { $0.contains(name) }) else { return false }
        rest = rest[(index + 1)...]
    }
    return true
}

/// The `[async]` lines of the crashed thread in the Swift runtime's backtracer output (its stderr).
func backtracerAsyncFrames(_ stderr: String) -> [String] {
    guard let start = stderr.range(of: "crashed:\n") else { return [] }
    let block = stderr[start.upperBound...].prefix { _ in true }
    var lines: [String] = []
    for line in block.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
        if line.hasPrefix("Thread ") || line.hasPrefix("Registers") { break }
        if line.contains("[async]") { lines.append(String(line)) }
    }
    return lines
}
