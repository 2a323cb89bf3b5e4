import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

/// A prepared exception is queued as a typed record and rendered by each destination when sent.
@Suite struct QueuedExceptionTests {
    static let record: QueuedException = {
        let description = CrashDescription(
            type: "Fatal error", value: "boom", mechanism: "swift_fatal", issueName: "Fatal error: boom",
            source: "message")
        var exception = CapturedException(
            description: description, facts: CrashReason.Facts(given: description), level: "fatal", handled: false)
        exception.mechanismMeta = ["signal": ["number": 4, "name": "SIGILL"]]
        let main = CapturedException.StackFrame(
            Frame(0x1000, kind: .returnAddress), inApp: true,
            symbols: [
                FrameSymbol(function: "work()", file: "main.swift", line: 2, column: 1, inlined: true),
                FrameSymbol(
                    function: "main", rawFunction: "$s3App4mainyyF", file: "main.swift", line: 3, column: 7,
                    inlined: false, symbolOffset: 0x20),
            ])
        exception.threads = [
            CapturedException.Thread(
                tid: 42, name: "main", crashed: true,
                frames: [CapturedException.StackFrame(Frame(0x1100, kind: .pc), inApp: true), main],
                async: CapturedException.AsyncStack(
                    anchor: 0, stop: .taskRoot,
                    frames: [CapturedException.StackFrame(Frame(0x1200, kind: .asyncResume), inApp: true)])),
            CapturedException.Thread(tid: 43, name: "worker", crashed: false, truncated: true, frames: []),
        ]
        exception.images = [
            CapturedException.Image(
                path: "/app/bin/App", base: 0x400, size: 4096, buildId: "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434")
        ]
        exception.arch = "x86_64"
        exception.breadcrumbs = [
            Breadcrumb(timestampMs: 1_796_032_799_000, category: "track", message: "Tap", data: [:])
        ]
        exception.breadcrumbsDropped = 2
        exception.properties = ["$app_release": "1.0", "$exception_pid": 9]
        exception.timestampMs = 1_796_032_800_000
        exception.insertId = "crash-7"
        exception.executable = "/app/bin/App"
        exception.complete = false
        return QueuedException(exception)
    }()

    @Test func theQueueJSONRoundTripsTheWholeRecord() throws {
        #expect(QueuedException(json: Self.record.json) == Self.record)
        #expect(CohorlyValue(json: Self.record.json)?["format"] == "cohorly-exception/1")
    }

    @Test func theEventReaderReadsBackWhatTheRecordRenders() throws {
        let read = CapturedException(exceptionEvent: .object(Self.record.event.properties))
        let written = Self.record.exception
        #expect(read.description.type == written.description.type)
        #expect(read.threads.map(\.tid) == written.threads.map(\.tid))
        #expect(read.threads[0].frames.map(\.frame) == written.threads[0].frames.map(\.frame))
        #expect(read.threads[0].async?.frames.map(\.frame) == written.threads[0].async?.frames.map(\.frame))
        #expect(read.threads[0].async?.anchor == 0)
        #expect(read.threads[0].frames[1].symbols.map(\.function) == ["work()", "main"])
    }

    @Test func theExceptionEventIsCymbalsShape() throws {
        let properties = Self.record.event.properties
        #expect(Self.record.event.name == "$exception")
        #expect(properties["$exception_type"] == "Fatal error")
        #expect(properties["$issue_name"] == "Fatal error: boom")
        #expect(properties["time"] == 1_796_032_800_000)
        let entry = try #require(properties["$exception_list"]?.arrayValue?.first)
        #expect(entry["thread_id"] == 42)
        #expect(
            entry["mechanism"] == [
                "type": "swift_fatal", "handled": false, "synthetic": false,
                "meta": ["signal": ["number": 4, "name": "SIGILL"]],
            ])
        let frames = try #require(entry["stacktrace"]?["frames"]?.arrayValue)
        // Oldest first: `main` with its inlined call, the async caller, the crash site.
        #expect(frames.map { $0["instruction_addr"] } == ["0x1000", "0x1000", "0x1200", "0x1100"])
        #expect(frames.map { $0[QueuedException.frameKindKey] } == ["return_address", nil, "async_resume", "pc"])
        #expect(frames[0]["module"] == "App")
        #expect(frames[0]["function"] == "main")
        #expect(frames[0]["lineno"] == 3)
        #expect(frames[0]["lang"] == "swift")
        #expect(frames[0]["client_resolved"] == true)
        #expect(frames[1]["inline"] == true)
        #expect(frames[1]["function"] == "work()")
        #expect(frames[3]["function"] == nil)
        #expect(entry["stacktrace"]?[QueuedException.asyncStopKey] == "task_root")
        #expect(properties["$debug_images"]?.arrayValue?.first?["debug_id"] == "e20a2268-5dc6-c165-b6aa-a12fa6765a6e")
        #expect(properties["$exception_threads"]?.arrayValue?.first?["name"] == "worker")
        #expect(properties["$exception_thread_name"] == "main")
        #expect(properties["$exception_executable"] == "/app/bin/App")
        #expect(properties["$exception_report_complete"] == false)
        #expect(properties["$exception_breadcrumbs"]?.arrayValue?.first?["timestamp"] == "2026-11-30T09:59:59.000Z")
        #expect(properties["$exception_breadcrumbs_dropped"] == 2)
    }

    @Test func aQueuedRecordReachesTheCohorlyAPIAsItsEvent() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        #expect(try client.enqueuePrepared(Self.record) == .queued)
        #expect(try client.enqueuePrepared(Self.record) == .alreadyQueued)
        #expect(await client.flush())
        let event = try #require(try collector.store.events(matching: EventQuery(limit: 10)).first)
        #expect(event.event == "$exception")
        #expect(event.insertId == "crash-7")
        #expect(event.time == 1_796_032_800_000)
        let properties = try #require(CohorlyValue(json: event.propertiesJSON))
        #expect(properties["distinct_id"]?.stringValue == client.currentDistinctId)
        #expect(properties["$exception_list"] == Self.record.event.properties["$exception_list"])
    }

    @Test func aQueuedRecordReachesPostHogAsItsEvent() async throws {
        let mock = try MockPostHog()
        defer { mock.stop() }
        let client = try makePostHogClient(mock)
        defer { client.shutdown() }
        #expect(try client.enqueuePrepared(Self.record) == .queued)
        #expect(await client.flush())
        let item = try #require(mock.requests.flatMap(\.batch).first)
        #expect(item["event"] == "$exception")
        #expect(item["timestamp"] == "2026-11-30T10:00:00.000Z")
        #expect(item["properties"]?["$exception_list"] == Self.record.event.properties["$exception_list"])
    }
}
