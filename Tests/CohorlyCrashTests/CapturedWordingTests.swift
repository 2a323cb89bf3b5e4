import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

/// A hang and a handled error did not crash anything: `crashes show` and `symbolicate` say `Captured:` and
/// `Thread N … captured`, where a crash says `Crash:` and `crashed`, and `crashes list` heads its last column
/// REASON. Real events: a handled error captured in this process, a hang left by a CrashDemo launch killed
/// while hung, both sent to a real collector over loopback.
@Suite struct CapturedWordingTests {
    static let cli = DemoBuild.debug.executable.deletingLastPathComponent().appendingPathComponent("cohorly").path

    /// Checks the text of one capture: the first line, the captured thread's title, no "crash" word in either.
    static func expectCaptured(_ text: String, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("Captured: " + reason) == true, "\(text)", sourceLocation: sourceLocation)
        let titles = lines.filter { $0.hasPrefix("Thread ") }
        #expect(titles.filter { $0.hasSuffix(" captured:") }.count == 1, "\(titles)", sourceLocation: sourceLocation)
        #expect(!titles.contains { $0.contains("crashed") }, "\(titles)", sourceLocation: sourceLocation)
        #expect(!text.hasPrefix("Crash:"), sourceLocation: sourceLocation)
    }

    @Test func aHandledErrorIsCapturedInCrashesShowAndSymbolicate() async throws {
        let setup = try CaptureErrorTests.Setup()
        defer { setup.finish() }
        parseOrderAndCapture(setup.client)
        #expect(await setup.client.flush())
        let event = try #require(try setup.exceptions().first)
        let insertId = try #require(event["$insert_id"]?.stringValue)
        let host = setup.collector.baseURL.absoluteString
        let reason = "CohorlyCrashTests.OrderParseError: bad order at line 3"

        let shown = try await SymbolicatedCrashTests.tool(Self.cli, ["crashes", "show", insertId, "--host", host])
        #expect(shown.status == 0)
        Self.expectCaptured(shown.output, reason: reason)

        let listed = try await SymbolicatedCrashTests.tool(Self.cli, ["crashes", "list", "--host", host])
        let rows = listed.output.split(separator: "\n").map(String.init)
        #expect(rows.first?.hasSuffix(" REASON") == true, "\(listed.output)")
        #expect(rows.count == 2 && rows[1].contains(" error ") && rows[1].hasSuffix(reason), "\(listed.output)")

        // The stored event symbolicated by the CLI says the same.
        let events = try await SymbolicatedCrashTests.tool(
            Self.cli, ["events", "list", "--event", "$exception", "--host", host, "--json"])
        let file = setup.root.appendingPathComponent("events.json")
        try events.output.write(to: file, atomically: true, encoding: .utf8)
        let local = try await SymbolicatedCrashTests.tool(Self.cli, ["symbolicate", file.path])
        #expect(local.status == 0)
        Self.expectCaptured(local.output, reason: reason)
    }

    @Test func aHangIsCapturedEvenWhenTheProcessDiedInIt() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let insertId = try await HangTests.leaveAHangReport(setup)
        let next = try await setup.launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        try #require(try await delivered { try setup.exceptions() }.count == 1)
        let host = setup.collector.baseURL.absoluteString

        let shown = try await SymbolicatedCrashTests.tool(Self.cli, ["crashes", "show", insertId, "--host", host])
        #expect(shown.status == 0)
        Self.expectCaptured(shown.output, reason: "Hang: main thread blocked for at least ")
        // --json carries what the text was decided from.
        let json = try await SymbolicatedCrashTests.tool(
            Self.cli, ["crashes", "show", insertId, "--host", host, "--json"])
        let crash = CohorlyValue(json: json.output)?["crash"]
        #expect(crash?["mechanism"] == "hang")
        #expect(crash?["handled"] == false)
    }
}
