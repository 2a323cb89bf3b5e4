import Cohorly
import CohorlyCrashModel
import Foundation
import Testing

@testable import CohorlyCrash

/// A thread running a dispatch queue's work is named in the report by the queue's label (read by the thread itself
/// from libdispatch's thread-specific data at crash time, cly_dispatch_queue.c), not by the kernel's 15-character
/// tail of libdispatch's root queue (`oot.default-qos`), which stays beside it as `comm`; other threads keep
/// their kernel name (issue 43, item 5).
@Suite struct DispatchQueueLabelTests {
    /// The crashed thread of a report file as written: its `name` and `comm`.
    static func crashedThread(_ run: CrashDemoRun) throws -> (name: String?, comm: String?) {
        let file = try #require(run.reportFiles.first, "no report: \(run.stderr)")
        let report = try #require(CohorlyValue(json: try String(contentsOf: file, encoding: .utf8)))
        let thread = try #require(report["crashed_thread"])
        return (thread["name"]?.stringValue, thread["comm"]?.stringValue)
    }

    @Test func aCrashOnADispatchQueueNamesItsThreadByTheQueuesLabel() async throws {
        let root = try makeTemporaryDirectory("queue-labels")
        defer { removeLaunchDirectory(root) }
        func crash(on place: String) async throws -> CrashDemoRun {
            try await runCrashDemo(
                ["crash", "null-write", "--on", place], reportDirectory: root.appendingPathComponent(place))
        }
        async let serial = crash(on: "queue")
        async let global = crash(on: "dispatch")
        async let main = crash(on: "main")
        async let thread = crash(on: "thread")

        let onSerial = try Self.crashedThread(try await serial)
        #expect(onSerial.name == "demo.checkout-queue", "\(onSerial)")
        let comm = try #require(onSerial.comm)
        #expect(comm.utf8.count <= 15 && comm != onSerial.name, "\(comm)")
        let onGlobal = try Self.crashedThread(try await global)
        #expect(onGlobal.name == "com.apple.root.default-qos", "\(onGlobal)")
        #expect(onGlobal.comm.map { "com.apple.root.default-qos".hasSuffix($0) } == true, "\(onGlobal)")
        // Threads that run no queue's work: their kernel names, no `comm`.
        let onMain = try Self.crashedThread(try await main)
        #expect(onMain.name == "CrashDemo" && onMain.comm == nil, "\(onMain)")
        let onThread = try Self.crashedThread(try await thread)
        #expect(onThread.name == "demo-crasher" && onThread.comm == nil, "\(onThread)")

        // The event carries the label as the crashed thread's name, so the pages, the CLI and the thread
        // breakdown show it.
        let report = try #require(try await serial.reports().first)
        let event = ExceptionBuilder.make(from: report, symbols: ExceptionBuilder.symbolicate(report)).properties
        #expect(event["$exception_thread_name"] == .string("demo.checkout-queue"))
    }
}
