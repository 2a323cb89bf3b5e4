import Foundation
import Testing

/// `CrashDemo --help` lists every option its parser takes.
struct CrashDemoHelpTests {
    @Test func helpListsEveryOptionTheParserTakes() async throws {
        let run = try await runCrashDemo(["--help"])
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        #expect(run.exitStatus == 0)
        #expect(run.stdout.contains("USAGE:"))
        let source = try String(
            contentsOf: DemoScriptTests.repository.appendingPathComponent("Examples/CrashDemo/main.swift"),
            encoding: .utf8)
        let parsed = source.matches(of: /case "(--?[a-z-]+)"(?:, "(--?[a-z-]+)")?/).flatMap { match in
            [String(match.output.1)] + (match.output.2.map { [String($0)] } ?? [])
        }
        #expect(parsed.count >= 15)
        for option in parsed {
            #expect(
                run.stdout.contains(" \(option) ") || run.stdout.contains(" \(option),"), "\(option) is not in --help")
        }
        for command in ["list", "crash", "scenario", "reports", "run"] {
            #expect(run.stdout.contains("CrashDemo \(command)"))
        }
    }
}
