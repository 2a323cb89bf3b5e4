import Cohorly
import CohorlyCrash
import Foundation
import TestWaiting
import Testing

/// What PostHog groups a crash by (PostHog's `cymbal`; docs/issues.md "Grouping key"): the exception type, then the
/// in-app frames —
/// only the resolved ones when any is — each as module and function; an unresolved one as
/// `<module> +<image_addr>`, which changes with every launch.
struct Fingerprint: Equatable, CustomStringConvertible {
    var type: String
    var frames: [String]

    init(_ event: Properties) {
        let exception = event["$exception_list"]?.arrayValue?.first
        type = exception?["type"]?.stringValue ?? ""
        let inApp = (exception?["stacktrace"]?["frames"]?.arrayValue ?? []).filter { $0["in_app"] == true }
        let resolved = inApp.filter { $0["function"] != nil }
        frames = (resolved.isEmpty ? inApp : resolved).map { frame in
            let module = frame["module"]?.stringValue ?? "?"
            let function = frame["function"]?.stringValue ?? "<\(module)> +\(frame["image_addr"]?.stringValue ?? "?")"
            return "\(module) \(function)"
        }
    }

    var description: String { ([type] + frames).joined(separator: "\n  ") }
}

/// Stable grouping, with real crashing processes: one crash site from two launches and from the same build
/// installed at two paths gives one type and one in-app (module, function) list; different sites differ.
@Suite("The same crash groups as one issue")
struct GroupingTests {
    @Test(arguments: DemoBuild.allCases)
    func oneCrashSiteGivesOneFingerprintAcrossLaunchesAndInstallPaths(_ build: DemoBuild) async throws {
        let root = try makeTemporaryDirectory("grouping")
        defer { try? FileManager.default.removeItem(at: root) }
        // The same build installed twice, at unrelated paths.
        var installs: [URL] = []
        for directory in ["home/alice/bin", "opt/shop/libexec"] {
            let place = root.appendingPathComponent(directory)
            try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
            let executable = place.appendingPathComponent("CrashDemo")
            try copyExecutable(from: build.executable.path, to: executable.path)
            installs.append(executable)
        }
        let runs: [(label: String, install: URL, arguments: [String])] = [
            ("index-1", installs[0], ["crash", "index-out-of-range"]),
            ("index-2", installs[0], ["crash", "index-out-of-range"]),
            ("index-other-path", installs[1], ["crash", "index-out-of-range"]),
            ("unwrap", installs[0], ["crash", "force-unwrap"]),
            ("null-main", installs[0], ["crash", "null-write", "--on", "main"]),
            ("null-thread", installs[1], ["crash", "null-write", "--on", "thread"]),
        ]
        let events = try await withThrowingTaskGroup(of: (String, Properties).self) { group in
            for run in runs {
                group.addTask {
                    let result = try await runCrashDemo(
                        run.arguments, executable: run.install, reportDirectory: root.appendingPathComponent(run.label))
                    let report = try #require(try result.reports().first, "\(run.label): no report")
                    let event = ExceptionBuilder.make(from: report, symbols: ExceptionBuilder.symbolicate(report))
                    return (run.label, event.properties)
                }
            }
            return try await group.reduce(into: [String: Properties]()) { $0[$1.0] = $1.1 }
        }
        let print = { (label: String) in try #require(events[label].map(Fingerprint.init), "\(label)") }
        let first = try print("index-1")
        #expect(first.frames.contains { $0.hasPrefix("CrashDemo ") && $0.contains("crashIndexOutOfRange") }, "\(first)")
        #expect(try print("index-2") == first, "\(build): two launches")
        #expect(try print("index-other-path") == first, "\(build): two install paths")
        // The grouping holds although what varies per launch and per path does vary.
        let image = { (label: String) in events[label]?["$debug_images"]?.arrayValue?.first }
        #expect(image("index-1")?["code_file"] != image("index-other-path")?["code_file"])
        if (try? String(contentsOfFile: "/proc/sys/kernel/randomize_va_space", encoding: .utf8))?.hasPrefix("0")
            == false
        {
            #expect(image("index-1")?["image_addr"] != image("index-2")?["image_addr"], "ASLR is on: bases differ")
        }
        // Different crash sites differ: another trap, and one signal from two different call paths.
        #expect(try print("unwrap") != first)
        let onMain = try print("null-main")
        let onThread = try print("null-thread")
        #expect(onMain.type == onThread.type)
        #expect(onMain != onThread, "\(onMain)\n\(onThread)")
    }
}
