import CohorlyCollector
import CohorlyCrashModel
import CohorlySymbols
import Foundation
import TestWaiting
import Testing

/// The whole loop with a stripped release binary: crash → next launch → `$exception` → debug file uploaded →
/// the collector shows it symbolicated, agreeing with llvm-symbolizer.
@Suite("Crashes shown symbolicated")
struct SymbolicatedCrashTests {
    static func tool(_ path: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let data = try await runReadingToEnd(process, reading: output)
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The release CrashDemo split like a shipped app: stripped binary with a debuglink, debug file apart.
    static func splitRelease(into root: URL) async throws -> (binary: URL, debugFile: URL) {
        let app = root.appendingPathComponent("app")
        let symbols = root.appendingPathComponent("symbols")
        try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: symbols, withIntermediateDirectories: true)
        let binary = app.appendingPathComponent("CrashDemo")
        let debugFile = symbols.appendingPathComponent("CrashDemo.debug")
        try copyExecutable(from: DemoBuild.release.executable.path, to: binary.path)
        #expect(try await tool("/usr/bin/objcopy", ["--only-keep-debug", binary.path, debugFile.path]).status == 0)
        #expect(try await tool("/usr/bin/strip", ["--strip-all", binary.path]).status == 0)
        #expect(try await tool("/usr/bin/objcopy", ["--add-gnu-debuglink=\(debugFile.path)", binary.path]).status == 0)
        return (binary, debugFile)
    }

    @Test func aStrippedReleaseCrashIsShownWithTheFunctionAndLineLLVMSymbolizerGives() async throws {
        let root = try makeTemporaryDirectory("symbolicated")
        defer { removeLaunchDirectory(root) }
        let (binary, debugFile) = try await Self.splitRelease(into: root)
        #expect(try ObjectInfo(path: binary.path).hasDebugInfo == false)

        var configuration = CollectorConfiguration()
        configuration.tokens = ["demo-token"]
        configuration.adminToken = "upload-secret"
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let environment = ["COHORLY_HOST": host, "COHORLY_TOKEN": "demo-token"]
        let storage = root.appendingPathComponent("storage").path
        let reports = root.appendingPathComponent("reports")

        let crash = try await runCrashDemo(
            ["crash", "index-out-of-range", "--identify", "crash-user", "--storage", storage], executable: binary,
            reportDirectory: reports, withClient: true, environment: environment)
        #expect(crash.signal == SIGILL)
        let report = try #require(try crash.reports().first)
        let frame0 = try #require(report.crashedThread?.frames.first)
        let module = try #require(report.module(containing: frame0))
        #expect(module.path == binary.path)

        let next = try await runCrashDemo(
            ["run", "--storage", storage, "--version", "9.9.9"], executable: binary, reportDirectory: reports,
            withClient: true, environment: environment)
        #expect(next.exitStatus == 0)

        // Before the debug file is uploaded, the frames stay raw and the text says how to fix it.
        let cli = DemoBuild.debug.executable.deletingLastPathComponent().appendingPathComponent("cohorly").path
        let raw = try await Self.tool(
            cli, ["crashes", "show", report.insertId, "--host", host, "--auth-token", "upload-secret"])
        #expect(raw.output.contains("\(binary.path) (build id"), "\(raw.output)")
        #expect(
            raw.output.contains("\nHint: upload their debug files to the collector with `cohorly debug-files upload"))

        // The release pipeline uploads the separate debug file (the binary that crashed has no DWARF).
        let upload = try await Self.tool(
            cli,
            [
                "debug-files", "upload", debugFile.path, "--release", "CrashDemo@1.0.0", "--host", host, "--auth-token",
                "upload-secret",
            ])
        #expect(upload.status == 0, "\(upload.output)")

        let shown = try await Self.tool(
            cli, ["crashes", "show", report.insertId, "--host", host, "--auth-token", "upload-secret", "--json"])
        #expect(shown.status == 0)
        let answer = try JSONDecoder().decode(Shown.self, from: Data(shown.output.utf8))
        #expect(answer.release == "CrashDemo@1.0.0")
        #expect(answer.distinctId == "crash-user")
        #expect(answer.crash.reason == "Swift runtime failure: Index out of range")
        #expect(answer.crash.reasonSource == "dwarf")
        let top = try #require(answer.crash.threads.first { $0.crashed }?.frames.first)
        let physical = try #require(top.symbols.last)
        #expect(physical.function?.contains("crashIndexOutOfRange") == true)

        // The same address through llvm-symbolizer on the debug file: the physical frame is its last answer.
        let address = "0x" + String(frame0.value - module.base.value, radix: 16)
        let reference = try await Self.tool(
            ReferenceSymbolizer.executable.path, ["--obj=\(debugFile.path)", "--inlines", address])
        let lines = reference.output.split(separator: "\n").map(String.init)
        let location = try #require(lines.last)  // file:line:column of the physical frame
        #expect(location == "\(physical.file ?? "?"):\(physical.line):\(physical.column)")
        #expect(top.symbols.count == lines.count / 2)  // same inline depth

        // The text form names the reason first, with the names as the Swift backtracer prints them.
        let text = try await Self.tool(
            cli, ["crashes", "show", report.insertId, "--host", host, "--auth-token", "upload-secret"])
        #expect(text.output.hasPrefix("Crash: Swift runtime failure: Index out of range"))
        #expect(text.output.contains("Release: CrashDemo@1.0.0"))
        #expect(text.output.contains(" CrashDemo crashIndexOutOfRange() at "), "\(text.output)")
        #expect(text.output.contains(" CrashDemo specialized crash(on:_:) at "))
        #expect(!text.output.contains(binary.path + " (build id"))

        // The list gives the same reason as `show`, and the crashed thread's name.
        let list = try await Self.tool(cli, ["crashes", "list", "--host", host, "--auth-token", "upload-secret"])
        let row = try #require(list.output.split(separator: "\n").first { $0.contains(report.insertId) })
        #expect(row.hasSuffix(" Swift runtime failure: Index out of range"), "\(row)")
        let threadName = try #require(report.crashedThread?.name)
        #expect(!threadName.isEmpty)
        #expect(row.contains(" " + threadName + " "))

        // The stored event, as `events list --json` prints it, symbolicated by the CLI with the debug file's
        // directory: the same reason and the same frames in the app as the collector shows.
        let listed = try await Self.tool(
            cli, ["events", "list", "--event", "$exception", "--host", host, "--auth-token", "upload-secret", "--json"])
        let events = root.appendingPathComponent("events.json")
        try listed.output.write(to: events, atomically: true, encoding: .utf8)
        let local = try await Self.tool(
            cli, ["symbolicate", events.path, "--debug-dir", debugFile.deletingLastPathComponent().path, "--json"])
        #expect(local.status == 0)
        let crashes = try JSONDecoder().decode([SymbolicatedCrash].self, from: Data(local.output.utf8))
        #expect(crashes.count == 1)
        #expect(crashes.first?.reason == answer.crash.reason)
        func appFrames(_ crash: SymbolicatedCrash?) -> [CapturedException.StackFrame] {
            crash?.threads.first { $0.crashed }?.frames.filter { $0.lookup?.imagePath == binary.path } ?? []
        }
        #expect(appFrames(crashes.first).count > 1)
        #expect(appFrames(crashes.first) == appFrames(answer.crash))
    }

    /// The C++ terminate hook and the report writer are the recorder's own frames: the text starts below them.
    @Test func theRecordersFramesAreHiddenFromTheText() async throws {
        let crash = try await runCrashDemo(["crash", "cxx-exception"])
        defer { try? FileManager.default.removeItem(at: crash.reportDirectory) }
        let path = try #require(crash.reportFiles.first).path
        let cli = DemoBuild.debug.executable.deletingLastPathComponent().appendingPathComponent("cohorly").path
        let text = try await Self.tool(cli, ["symbolicate", path])
        let lines = text.output.split(separator: "\n").map(String.init)
        let title = try #require(lines.firstIndex { $0.hasSuffix(" crashed:") })
        let top = lines[title + 1]
        #expect(!top.contains("cly_") && !top.contains("terminate_hook"), "\(text.output)")
        #expect(lines.contains { $0.contains("demo::Widget<int>::explode(char const*)") })
        let json = try await Self.tool(cli, ["symbolicate", path, "--json"])
        #expect(json.output.contains("\"raw_function\" : \"cly_handle_crash\""))
    }

    struct Shown: Decodable {
        var release: String?
        var distinctId: String
        var crash: SymbolicatedCrash

        enum CodingKeys: String, CodingKey {
            case release, crash
            case distinctId = "distinct_id"
        }
    }
}
