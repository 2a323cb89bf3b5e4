import Foundation
import TestWaiting
import Testing

/// The README's first command, `scripts/demo`, run end to end with the builds the test suite already has (the
/// release CrashDemo that scripts/test builds, the debug `cohorly`): it must exit 0 and show every crash it
/// caused.
@Suite("scripts/demo")
struct DemoScriptTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `--posthog`: the crashes sent through the PostHog destination (capture V1); `--sentry`: through the Sentry
    /// destination (envelopes), with the release-health sessions the collector received.
    @Test(arguments: ["", "--posthog", "--sentry"])
    func theDemoExitsZeroAndShowsAllSixCrashesSymbolicated(destination: String) async throws {
        let (process, text) = try await Self.runDemo(destination.isEmpty ? [] : [destination])
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0, "scripts/demo output:\n\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        #expect(
            lines.contains { $0.hasPrefix("   CrashDemo sends through the PostHog destination") }
                == (destination == "--posthog"))
        #expect(
            lines.contains { $0.hasPrefix("   CrashDemo sends through the Sentry destination") }
                == (destination == "--sentry"))
        let crashes = lines.filter { $0.hasPrefix("Crash: ") }
        #expect(crashes.count == 6, "\(crashes)")
        for reason in [
            "Fatal error: demo fatal", "Swift runtime failure: Index out of range",
            "Segmentation fault: address not mapped at 0x0", "std::runtime_error: demo C++ failure", "Stack overflow",
            "Swift runtime failure: Unexpectedly found nil while unwrapping an Optional value",
        ] {
            #expect(crashes.contains { $0.contains(reason) }, "no crash shown with \(reason): \(crashes)")
        }
        // Each crash shows its crashed thread, symbolicated with the uploaded debug file.
        #expect(lines.filter { $0.hasPrefix("Thread ") && $0.hasSuffix(" crashed:") }.count == 6)
        #expect(text.contains(" CrashDemo crashIndexOutOfRange() at "))  // names as the Swift backtracer prints them
        #expect(text.contains(" CrashDemo PricingEngine.discountPercent(for:) at "))  // the async crash…
        // …and who awaited it (the Sentry event carries the async callers as plain frames, without their kind).
        for caller in ["OrderService.price(cents:couponCode:)", "checkout(cart:coupon:)", "handleRequest(path:)"]
        where destination != "--sentry" {
            #expect(text.contains(" [async] CrashDemo \(caller) at "), "\(caller) not shown")
        }
        for kind in [
            "fatal-error", "index-out-of-range", "null-write", "cxx-exception", "stack-overflow", "async-actor",
        ] {
            #expect(lines.contains { $0.hasPrefix("   CrashDemo crash \(kind): exit status 1") })
        }
        // bash reports a child killed by a signal as "…: line N: PID Illegal instruction …".
        let jobLines = lines.filter { $0.range(of: #"line [0-9]+: +[0-9]+ "#, options: .regularExpression) != nil }
        #expect(jobLines.isEmpty, "\(jobLines)")
        // One issue per distinct crash: the list's header and six rows, each of one occurrence.
        let issues = lines.drop { $0 != "== the crashes grouped into issues (cohorly issues list)" }.dropFirst()
            .prefix { !$0.hasPrefix("==") }
        #expect(issues.count == 7, "\(issues)")
        // ID, SHORT ID, STATE, LEVEL, then EVENTS.
        #expect(issues.dropFirst().allSatisfy { $0.split(separator: " ").dropFirst(4).first == "1" }, "\(issues)")
        #expect(lines.contains("== the collector shows 6 of 6 crashes"))
        // It ends with the web page's login URL, the one `cohorly serve` printed.
        let login = lines.last ?? ""
        #expect(
            login.range(
                of: #"^   http://cohorly-[0-9a-f]{32}\.localhost:[0-9]+/login\?token=[0-9a-f]{64}$"#,
                options: .regularExpression)
                != nil, "\(login)")
        if destination == "--sentry" { expectSessions(lines) }
    }

    /// `--again`: the same six crashes once more open no issue: the list shows the same six issues, of two
    /// occurrences each (issue 27: "a second demo run adds occurrences, not issues").
    @Test func crashingTheSameWaysAgainAddsOccurrencesNotIssues() async throws {
        let (process, text) = try await Self.runDemo(["--again"])
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "scripts/demo output:\n\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        // Both issue lists, each a header (ID SHORT-ID STATE LEVEL EVENTS USERS LAST-SEEN RELEASES ISSUE) and its rows.
        let headers = lines.indices.filter { lines[$0].hasPrefix("ID ") && lines[$0].contains(" STATE ") }
        #expect(headers.count == 2, "\(text)")
        let lists = headers.map { header in
            lines[(header + 1)...].prefix { !$0.isEmpty && !$0.hasPrefix("==") }.map {
                $0.split(separator: " ").map(String.init)
            }
        }
        guard let first = lists.first, let second = lists.last, lists.count == 2 else { return }
        #expect(first.count == 6 && first.allSatisfy { $0.count > 7 && $0[4] == "1" }, "\(first)")
        #expect(second.count == 6 && second.allSatisfy { $0[4] == "2" && $0[5] == "1" }, "\(second)")
        #expect(Set(second.map { $0[0] }) == Set(first.map { $0[0] }), "the same issues: \(first) \(second)")
    }

    /// Runs scripts/demo with these arguments and the builds the test suite has; the process and its output.
    static func runDemo(_ arguments: [String]) async throws -> (process: Process, text: String) {
        let crashDemo = DemoBuild.release.executable
        guard FileManager.default.isExecutableFile(atPath: crashDemo.path) else {
            throw CrashDemoError.missingExecutable(crashDemo)
        }
        let cohorly = DemoBuild.debug.executable.deletingLastPathComponent().appendingPathComponent("cohorly")
        let outputs = try makeTemporaryDirectory("demo")
        defer { try? FileManager.default.removeItem(at: outputs) }
        let outputURL = outputs.appendingPathComponent("output")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments =
            [
                Self.repository.appendingPathComponent("scripts/demo").path, "--crash-demo", crashDemo.path,
                "--cohorly", cohorly.path,
            ] + arguments
        let output = try FileHandle(forWritingTo: outputURL)
        process.standardOutput = output
        process.standardError = output  // bash's job lines would land here: they must not appear
        try await runToEnd(process)
        return (process, (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "")
    }

    /// `cohorly sessions list` after the Sentry demo: one session per launch (seven), each crashed launch's `ok`
    /// then `crashed` (with one error), the clean launch's `ok` (and its `exited` when the detached sender
    /// delivered it before the list), all for the crashes' release.
    func expectSessions(_ lines: [String]) {
        guard let start = lines.firstIndex(of: "== release health: the session updates the collector received") else {
            Issue.record("no sessions listed")
            return
        }
        let rows = lines[(start + 2)...].prefix { !$0.hasPrefix("==") }.map {
            $0.split(separator: " ").map(String.init)
        }
        // STARTED STATUS ERRORS DURATION RELEASE SESSION-ID DISTINCT-ID
        let statuses = Dictionary(grouping: rows.filter { $0.count == 7 }, by: { $0[5] }).mapValues { $0.map { $0[1] } }
        #expect(statuses.count == 7, "\(rows)")
        #expect(statuses.values.filter { $0 == ["ok", "crashed"] }.count == 6, "\(statuses)")
        #expect(statuses.values.filter { $0 == ["ok"] || $0 == ["ok", "exited"] }.count == 1, "\(statuses)")
        #expect(rows.allSatisfy { $0.count == 7 && $0[4] == "CrashDemo@1.0.0" }, "\(rows)")
        #expect(rows.filter { $0[1] == "crashed" }.allSatisfy { $0[2] == "1" }, "\(rows)")
    }
}
