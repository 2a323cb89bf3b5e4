import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlyCrash

/// A handled error captured three awaits deep: the innermost function awaited `Task.yield()` first, so it runs
/// as a resume funclet on an executor thread, its callers only in the async context chain.
@inline(never)
func captureInAwaitedFunction(_ cohorly: Cohorly) async {
    await Task.yield()
    cohorly.captureError(OrderParseError(line: 9))
}

@inline(never)
func awaitTheCapture(_ cohorly: Cohorly) async -> Int {
    await captureInAwaitedFunction(cohorly)
    return capturesCounted.load(ordering: .relaxed)
}

@inline(never)
func awaitTheAwaiter(_ cohorly: Cohorly) async -> Int {
    let count = await awaitTheCapture(cohorly)
    return count + 1
}

/// `captureError` in async code names the functions that awaited it (issue 22 item 4): on the device (the event's
/// frames, symbolicated here, in caller order) and off it (the collector's `crashes show`).
@Suite struct AsyncHandledErrorTests {
    static func functions(_ frames: [CohorlyValue]) -> [String] { frames.compactMap { $0["function"]?.stringValue } }

    @Test func captureErrorThreeAwaitsDeepNamesTheAwaitingFunctions() async throws {
        let setup = try CaptureErrorTests.Setup()
        defer { setup.finish() }
        _ = await awaitTheAwaiter(setup.client)
        #expect(await setup.client.flush())
        let event = try #require(try setup.exceptions().first)
        // Innermost first, physical frames only (inlined calls folded away).
        let frames = CaptureErrorTests.siteFrames(event)
        let kinds = frames.compactMap { $0[CapturedException.frameKindKey]?.stringValue }
        #expect(kinds.first == "return_address")
        let asyncFrames = frames.filter { $0[CapturedException.frameKindKey] == "async_resume" }
        let callers = Self.functions(asyncFrames)
        #expect(callers.count >= 2, "\(Self.functions(frames))")
        #expect(callers.first?.contains("awaitTheCapture") == true, "\(callers)")
        #expect(callers.dropFirst().first?.contains("awaitTheAwaiter") == true, "\(callers)")
        // The awaiting functions are the app's; the chain's swift-testing tasks above them are not (the
        // toolchain's module), nor are thunks.
        let awaiting = asyncFrames.filter { frame in
            ["awaitTheCapture", "awaitTheAwaiter"].contains { frame["function"]?.stringValue?.contains($0) == true }
        }
        #expect(awaiting.count >= 2 && awaiting.allSatisfy { $0["in_app"] == true }, "\(callers)")
        let testing = asyncFrames.filter { $0["symbol"]?.stringValue.flatMap(SwiftMangling.module(of:)) == "Testing" }
        #expect(testing.allSatisfy { $0["in_app"] == false }, "\(callers)")
        // The capturing function is at or above the anchor, before its callers.
        let firstAsync = try #require(frames.firstIndex { $0[CapturedException.frameKindKey] == "async_resume" })
        #expect(
            Self.functions(Array(frames[..<firstAsync])).contains { $0.contains("captureInAwaitedFunction") },
            "\(Self.functions(frames))")
        let stacktrace = event["$exception_list"]?.arrayValue?.first?["stacktrace"]
        // Why the walk ended is said (in this test process the chain goes on into swift-testing's own tasks).
        #expect(stacktrace?[CapturedException.asyncStopKey]?.stringValue != nil)
        // Off the device: the collector reads the chain back and symbolicates the resume points itself.
        let directory = try makeTemporaryDirectory("async-off-device")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(
            atPath: LiveStack.executablePath, toPath: directory.appendingPathComponent("binary").path)
        let queries = CrashQueries(
            store: setup.collector.store, debugFiles: setup.collector.debugFiles, extraDirectories: [directory.path])
        let insertId = try #require(event["$insert_id"]?.stringValue)
        let shown = try #require(try queries.show(insertId: insertId))
        let thread = try #require(shown["crash"]?["threads"]?.arrayValue?.first)
        let shownCallers = (thread["async_frames"]?.arrayValue ?? []).compactMap {
            $0["symbols"]?.arrayValue?.last?["function"]?.stringValue
        }
        #expect(shownCallers.first?.contains("awaitTheCapture") == true, "\(shownCallers)")
        #expect(shownCallers.dropFirst().first?.contains("awaitTheAwaiter") == true, "\(shownCallers)")
        #expect(thread["async_stop"] == stacktrace?[CapturedException.asyncStopKey])
    }
}
