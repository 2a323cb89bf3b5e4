import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// The events the SDK makes while the launch runs — a handled error, a hang — carry the release and dist that
/// its crash would carry (`install(release:dist:)`), through the Cohorly API and PostHog capture V1 alike. Real
/// CrashDemo processes and a loopback collector, which speaks both wires.
@Suite("Release and dist on live events")
struct LiveEventReleaseTests {
    static func run(_ arguments: [String], destination: String) async throws -> [Properties] {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["demo-token"]
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        defer { collector.stop() }
        let root = try makeTemporaryDirectory("live-release")
        defer { removeLaunchDirectory(root) }
        var environment = ["COHORLY_HOST": collector.baseURL.absoluteString, "COHORLY_TOKEN": "demo-token"]
        if destination == "posthog" { environment["COHORLY_DESTINATION"] = "posthog" }
        let run = try await runCrashDemo(
            arguments + [
                "--storage", root.appendingPathComponent("storage").path, "--version", "3.1.0", "--dist", "b7",
            ],
            reportDirectory: root.appendingPathComponent("reports"), withClient: true, environment: environment)
        #expect(run.exitStatus == 0, "\(run.stdout) \(run.stderr)")
        return try collector.store.events(matching: EventQuery(event: "$exception", limit: 10)).compactMap {
            CohorlyValue(json: $0.propertiesJSON)?.objectValue
        }
    }

    @Test(arguments: ["cohorly", "posthog"])
    func aHandledErrorCarriesTheReleaseAndDist(destination: String) async throws {
        let events = try await Self.run(["scenario", "capture-error"], destination: destination)
        #expect(events.count == 1)
        let properties = try #require(events.first)
        #expect(properties["$exception_level"] == "error")
        #expect(properties["release"] == "CrashDemo@3.1.0")
        #expect(properties["dist"] == "b7")
    }

    @Test(arguments: ["cohorly", "posthog"])
    func aHangCarriesTheReleaseAndDist(destination: String) async throws {
        let events = try await Self.run(["hang", "main"] + HangTests.threshold, destination: destination)
        #expect(events.count == 1)
        let properties = try #require(events.first)
        #expect(properties["$exception_type"] == "Hang")
        #expect(properties["release"] == "CrashDemo@3.1.0")
        #expect(properties["dist"] == "b7")
    }
}
