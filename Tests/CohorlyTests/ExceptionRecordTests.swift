import CohorlyCollector
import Foundation
import Testing

@testable import Cohorly

/// A prepared exception is queued as a typed record and rendered by each destination when sent.
@Suite struct ExceptionRecordTests {
    static let record = ExceptionRecord(
        insertId: "crash-7", timestampMs: 1_796_032_800_000, level: "fatal", issueName: "Fatal error: boom",
        exceptions: [
            ExceptionRecord.Exception(
                type: "Fatal error", value: "boom",
                mechanism: ExceptionRecord.Mechanism(
                    type: "swift_fatal", handled: false, meta: ["signal": ["number": 4, "name": "SIGILL"]]),
                threadId: 42,
                frames: [
                    ExceptionRecord.Frame(
                        instructionAddress: "0x1000", imageAddress: "0x400", imagePath: "/app/bin/App", inApp: true,
                        function: "main", filename: "main.swift", line: 3, column: 7, language: "swift",
                        resolved: true, kind: "return_address"),
                    ExceptionRecord.Frame(instructionAddress: "0x1004", inlined: true),
                ], asyncStop: "task_root")
        ],
        threads: [ExceptionRecord.Thread(id: 43, name: "worker", frames: [], asyncStop: "fault")],
        images: [
            ExceptionRecord.Image(
                codeFile: "/app/bin/App", codeId: "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434",
                debugId: "e20a2268-5dc6-c165-b6aa-a12fa6765a6e", imageAddress: "0x400", imageSize: 4096,
                arch: "x86_64")
        ],
        breadcrumbs: [
            ExceptionRecord.Breadcrumb(timestampMs: 1_796_032_799_000, category: "track", message: "Tap", data: [:])
        ],
        properties: ["$app_release": "1.0", "$exception_pid": 9])

    @Test func theQueueJSONRoundTripsTheWholeRecord() throws {
        #expect(ExceptionRecord(json: Self.record.json) == Self.record)
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
        #expect(frames[0]["module"] == "App")
        #expect(frames[0]["lineno"] == 3)
        #expect(frames[0]["client_resolved"] == true)
        #expect(frames[1]["inline"] == true)
        #expect(frames[1]["function"] == nil)
        #expect(properties["$debug_images"]?.arrayValue?.first?["debug_id"] == "e20a2268-5dc6-c165-b6aa-a12fa6765a6e")
        #expect(properties["$exception_threads"]?.arrayValue?.first?["name"] == "worker")
        #expect(properties["$exception_breadcrumbs"]?.arrayValue?.first?["timestamp"] == "2026-11-30T09:59:59.000Z")
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
