import Cohorly
import Foundation
import TestWaiting

/// Headless Chromium (Debian's `chromium`, installed by scripts/install-deps), driven through the DevTools
/// protocol by Tests/Browser/cdp.py: one browser launch per `run`, a fresh temporary profile each time.
enum Chromium {
    /// The browser, when installed.
    static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let candidates = path.split(separator: ":").map { "\($0)/chromium" } + ["/usr/bin/chromium"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Why the browser tests do not run here, when they do not.
    static let missing = "chromium is not installed (scripts/install-deps installs Debian's chromium package)"

    static let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Browser/cdp.py")

    /// What one browser session saw.
    struct Session {
        /// Each step's result (`eval`: the value; others nil).
        var results: [CohorlyValue]
        /// Every request the page made, in order.
        var requests: [(url: String, method: String)]
        /// Every document answer: its URL and status.
        var documents: [(url: String, status: Int)]
        /// The origin the foreign page was served from.
        var foreign: String
        /// Every request the foreign server received (a neighbour's server): its `Host`, path and the `Cookie`
        /// header the browser sent along ("" when none).
        var foreignRequests: [(host: String, path: String, cookie: String)] = []
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `steps` (cdp.py's step objects) in one headless browser; `foreignPage` is served from another origin
    /// (another port of 127.0.0.1, `FOREIGN` in the steps; `NEIGHBOUR` names it as `localhost`).
    static func run(_ steps: [CohorlyValue], foreignPage: String? = nil) async throws -> Session {
        guard let executable else { throw Failure(description: missing) }
        let directory = try makeTemporaryDirectory("chromium-steps")
        defer { try? FileManager.default.removeItem(at: directory) }
        var plan: [String: CohorlyValue] = ["steps": .array(steps)]
        if let foreignPage { plan["foreign_page"] = .string(foreignPage) }
        let stepsFile = directory.appendingPathComponent("steps.json")
        try Data(CohorlyValue.object(plan).jsonString.utf8).write(to: stepsFile)
        let errors = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", driver.path, executable, stepsFile.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errors)
        let data = try await runReadingToEnd(process, reading: output)
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0, let answer = CohorlyValue(json: text) else {
            let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            let relevant = stderr.split(separator: "\n").filter { !$0.contains("dbus") }.joined(separator: "\n")
            throw Failure(description: "cdp.py exited \(process.terminationStatus): \(relevant)")
        }
        return Session(
            results: answer["results"]?.arrayValue ?? [],
            requests: (answer["requests"]?.arrayValue ?? []).map {
                ($0["url"]?.stringValue ?? "", $0["method"]?.stringValue ?? "")
            },
            documents: (answer["documents"]?.arrayValue ?? []).map {
                ($0["url"]?.stringValue ?? "", $0["status"]?.intValue ?? 0)
            },
            foreign: answer["foreign"]?.stringValue ?? "",
            foreignRequests: (answer["foreign_requests"]?.arrayValue ?? []).map {
                ($0["host"]?.stringValue ?? "", $0["path"]?.stringValue ?? "", $0["cookie"]?.stringValue ?? "")
            })
    }
}
