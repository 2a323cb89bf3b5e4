import Cohorly
import Foundation
import TestWaiting
import Testing

/// `cohorly serve` and `cohorly events list` as real processes.
@Suite struct CLITests {
    static var cli: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("cohorly")
    }

    static let emptyDirectory = temporaryDirectory()

    /// Runs `cohorly`; with `environment`, the child sees only it (plus PATH), else the test's environment. The
    /// wait for it runs off the cooperative pool.
    static func run(_ arguments: [String], environment: [String: String]? = nil) async throws -> (
        status: Int32, output: String, error: String
    ) {
        let directory = emptyDirectory
        return try await offThePool {
            let process = Process()
            process.executableURL = cli
            process.arguments = arguments
            // An empty working directory: `debug-files find` searches the current directory by default.
            process.currentDirectoryURL = directory
            if let environment { process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 } }
            let output = Pipe()
            let error = Pipe()
            process.standardOutput = output
            process.standardError = error
            try process.run()
            let outData = output.fileHandleForReading.readDataToEndOfFile()
            let errData = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (
                process.terminationStatus, String(decoding: outData, as: UTF8.self),
                String(decoding: errData, as: UTF8.self)
            )
        }
    }

    @Test func serveOnAPickedPortThenListEvents() async throws {
        let data = temporaryDirectory()
        let server = Process()
        server.executableURL = Self.cli
        server.arguments = ["serve", "--port", "0", "--data", data.path, "--token", "cli-token"]
        let pipe = Pipe()
        server.standardOutput = pipe
        try server.run()
        let reader = pipe.fileHandleForReading
        var firstLine = ""
        while !firstLine.contains("\n") {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            firstLine += String(decoding: chunk, as: UTF8.self)
        }
        let host = try #require(
            firstLine.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init))
        #expect(!host.hasSuffix(":0"))

        let body = #"[{"event":"cli","properties":{"distinct_id":"u","$insert_id":"cli-1","time":1700000000000}}]"#
        let request = TransportRequest(
            url: try #require(URL(string: host + "/track")),
            headers: [("Content-Type", "application/json"), ("X-Cohorly-Token", "cli-token")], body: Array(body.utf8),
            timeout: 5, connectTimeout: 5)
        guard case .http(200, _, _) = CurlTransport().send(request) else {
            Issue.record("ingestion failed")
            return
        }
        let table = try await Self.run(["events", "list", "--host", host])
        #expect(table.status == 0)
        #expect(table.output.contains("2023-11-14T22:13:20.000Z"))
        #expect(table.output.contains("cli-1"))
        let json = try await Self.run(["events", "list", "--host", host, "--json"])
        #expect(json.status == 0)
        #expect(CohorlyValue(json: json.output)?["events"]?.arrayValue?.first?["insert_id"] == "cli-1")

        kill(server.processIdentifier, SIGTERM)
        await waitForExit(server)
        #expect(server.terminationStatus == 0)
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("collector.sqlite").path))
    }

    @Test func usageErrorsExitTwoAndUnreachableHostsExitOne() async throws {
        let unknown = try await Self.run(["frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.error.hasPrefix("cohorly: unknown command 'frobnicate'"))
        #expect(try await Self.run(["serve", "--port", "notaport"]).status == 2)
        #expect(try await Self.run(["events", "list", "--bogus"]).status == 2)
        let unreachable = try await Self.run(["events", "list", "--host", "http://127.0.0.1:1"])
        #expect(unreachable.status == 1)
        #expect(unreachable.error.hasPrefix("cohorly: cannot reach"))
        #expect(try await Self.run(["--help"]).output.contains("events list"))
    }
}
