import Cohorly
import CohorlyCollector
import CohorlySymbols
import Foundation
import TestWaiting
import Testing

/// `sentry-cli debug-files upload` (from PyPI, as a team's CI runs it) against the collector's Sentry chunk-upload
/// routes, with the collector's secret as its auth token: the debug file is stored by build id, served over
/// debuginfod and used to symbolicate a crash of the stripped binary.
@Suite struct SentryCLIUploadTests {
    /// sentry-cli on `PATH` (scripts/install-deps installs it with pip).
    static func sentryCLI() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return path.split(separator: ":").map { "\($0)/sentry-cli" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    static func upload(_ file: URL, host: String, token: String) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(sentryCLI(), "sentry-cli is not installed"))
        process.arguments = [
            "--url", host, "--log-level", "info", "debug-files", "upload", "--org", "o", "--project", "p", file.path,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["SENTRY_AUTH_TOKEN"] = token
        environment["SENTRY_LOAD_DOTENV"] = "0"
        environment["SENTRY_DISABLE_UPDATE_CHECK"] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let data = try await runReadingToEnd(process, reading: output)
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func get(_ url: URL, token: String? = nil) -> (Int, [UInt8]) {
        let request = TransportRequest(
            url: url, method: "GET", headers: token.map { [("Authorization", "Bearer \($0)")] } ?? [], body: [],
            timeout: 60, connectTimeout: 5)
        guard case .http(let status, _, let body) = CurlTransport().send(request) else { return (0, []) }
        return (status, body)
    }

    @Test func sentryCLIUploadsADebugFileThatSymbolicatesACrash() async throws {
        let root = try makeTemporaryDirectory("sentry-cli-upload")
        defer { removeLaunchDirectory(root) }
        let (binary, debugFile) = try await SymbolicatedCrashTests.splitRelease(into: root)
        let buildId = try #require(try ObjectInfo(path: debugFile.path).codeId)
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
            ["crash", "index-out-of-range", "--storage", storage], executable: binary, reportDirectory: reports,
            withClient: true, environment: environment)
        #expect(crash.signal == SIGILL)
        let report = try #require(try crash.reports().first)
        let next = try await runCrashDemo(
            ["run", "--storage", storage], executable: binary, reportDirectory: reports, withClient: true,
            environment: environment)
        #expect(next.exitStatus == 0)

        // A wrong token is refused and nothing is stored.
        let refused = try await Self.upload(debugFile, host: host, token: "wrong")
        #expect(refused.status != 0)
        #expect(refused.output.contains("401"), "\(refused.output)")
        #expect(try collector.debugFiles.list().isEmpty)

        let upload = try await Self.upload(debugFile, host: host, token: "upload-secret")
        #expect(upload.status == 0, "\(upload.output)")
        let stored = try collector.debugFiles.list()
        #expect(stored.map(\.kind) == [.debuginfo])  // a debug companion: DWARF, no code
        #expect(stored.first?.buildId == buildId)
        #expect(stored.first?.fileName == "CrashDemo.debug")

        // Served over debuginfod, byte for byte.
        let served = Self.get(collector.baseURL.appendingPathComponent("buildid/\(buildId)/debuginfo"))
        #expect(served.0 == 200)
        #expect(served.1 == Array(try Data(contentsOf: debugFile)))

        // And the crash of the stripped binary is symbolicated with it.
        let shown = Self.get(
            collector.baseURL.appendingPathComponent("api/crashes/\(report.insertId.lowercased())"),
            token: "upload-secret")
        #expect(shown.0 == 200)
        let answer = try #require(CohorlyValue(bytes: shown.1))
        let threads = answer["crash"]?["threads"]?.arrayValue ?? []
        let crashed = try #require(threads.first { $0["crashed"] == .bool(true) })
        let top = crashed["frames"]?.arrayValue?.first?["symbols"]?.arrayValue?.last
        #expect(top?["function"]?.stringValue?.contains("crashIndexOutOfRange") == true, "\(crashed)")
        #expect(answer["crash"]?["reason"] == "Swift runtime failure: Index out of range")

        // Uploading again finds the file there: nothing is sent twice.
        let again = try await Self.upload(debugFile, host: host, token: "upload-secret")
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("Nothing to upload"), "\(again.output)")
        #expect(try collector.debugFiles.list().count == 1)
    }
}
