import CohorlyCollector
import CohorlySQLite
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Exception rows the previous version queued (its own layout of the event, before the queue held the crash
/// model's exception) are read after the upgrade and sent as the event they stood for.
@Suite struct LegacyExceptionRowTests {
    /// A crash row exactly as the previous version wrote it (SentryRecords.crash of that version).
    static let row = """
        {
         "breadcrumbs": [
          {
           "category": "track",
           "data": {
            "step": "pay"
           },
           "message": "Checkout",
           "timestampMs": 1796032799000
          }
         ],
         "exceptions": [
          {
           "frames": [
            {
             "column": 0,
             "function": "__libc_start_main",
             "imageAddress": "0x7f0000000000",
             "imagePath": "/usr/lib/x86_64-linux-gnu/libc.so.6",
             "inApp": false,
             "inlined": false,
             "instructionAddress": "0x7f0000001234",
             "line": 0,
             "resolved": true
            },
            {
             "column": 5,
             "filename": "/src/App/main.swift",
             "function": "main",
             "imageAddress": "0x400000",
             "imagePath": "/opt/app/bin/App",
             "inApp": true,
             "inlined": false,
             "instructionAddress": "0x401000",
             "language": "swift",
             "line": 12,
             "resolved": true
            },
            {
             "column": 9,
             "filename": "/src/App/Crash.swift",
             "function": "App.crash() -> ()",
             "imageAddress": "0x400000",
             "imagePath": "/opt/app/bin/App",
             "inApp": true,
             "inlined": false,
             "instructionAddress": "0x401234",
             "language": "swift",
             "line": 3,
             "resolved": true
            },
            {
             "column": 0,
             "filename": "/src/App/Crash.swift",
             "function": "Swift runtime failure: Index out of range",
             "imageAddress": "0x400000",
             "imagePath": "/opt/app/bin/App",
             "inApp": true,
             "inlined": true,
             "instructionAddress": "0x401234",
             "line": 3,
             "resolved": true
            }
           ],
           "mechanism": {
            "handled": false,
            "meta": {
             "signal": {
              "address": "0x0",
              "code": 128,
              "name": "SIGTRAP",
              "number": 5
             }
            },
            "synthetic": false,
            "type": "swift_fatal"
           },
           "threadId": 100,
           "type": "Swift runtime failure: Index out of range",
           "value": "Index out of range"
          }
         ],
         "images": [
          {
           "arch": "x86_64",
           "codeFile": "/usr/lib/x86_64-linux-gnu/libc.so.6",
           "codeId": "1c304742f114215453a8a777f6cdb3a2b8505e11",
           "debugId": "4247301c-14f1-5421-53a8-a777f6cdb3a2",
           "imageAddress": "0x7f0000000000",
           "imageSize": 2000000
          },
          {
           "arch": "x86_64",
           "codeFile": "/opt/app/bin/App",
           "codeId": "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434",
           "debugId": "e20a2268-5dc6-c165-b6aa-a12fa6765a6e",
           "imageAddress": "0x400000",
           "imageSize": 65536
          }
         ],
         "insertId": "5c8e3a02-3f7a-4d57-9d7e-6f7f0a1b2c3d",
         "issueName": "Swift runtime failure: Index out of range",
         "level": "fatal",
         "properties": {
          "$app_name": "App",
          "$app_start_ms": 1796032700000,
          "$arch": "x86_64",
          "$exception_pid": 4242,
          "$exception_thread_name": "main",
          "$kernel_version": "6.1.0",
          "$lib": "cohorly-swift-linux",
          "$os": "Linux",
          "$os_version": "12",
          "cart": {
           "items": 2
          },
          "distinct_id": "user-1",
          "plan": "pro",
          "release": "App@1.2.0",
          "seats": 3
         },
         "threads": [
          {
           "frames": [
            {
             "column": 0,
             "function": "__libc_start_main",
             "imageAddress": "0x7f0000000000",
             "imagePath": "/usr/lib/x86_64-linux-gnu/libc.so.6",
             "inApp": false,
             "inlined": false,
             "instructionAddress": "0x7f0000001234",
             "line": 0,
             "resolved": true
            },
            {
             "column": 5,
             "filename": "/src/App/main.swift",
             "function": "main",
             "imageAddress": "0x400000",
             "imagePath": "/opt/app/bin/App",
             "inApp": true,
             "inlined": false,
             "instructionAddress": "0x401000",
             "language": "swift",
             "line": 12,
             "resolved": true
            }
           ],
           "id": 101,
           "name": "worker"
          }
         ],
         "timestampMs": 1796032800000
        }
        """

    /// The `$exception` properties the previous version rendered from that row.
    static let event = """
        {
         "$app_name": "App",
         "$app_start_ms": 1796032700000,
         "$arch": "x86_64",
         "$debug_images": [
          {
           "arch": "x86_64",
           "code_file": "/usr/lib/x86_64-linux-gnu/libc.so.6",
           "code_id": "1c304742f114215453a8a777f6cdb3a2b8505e11",
           "debug_id": "4247301c-14f1-5421-53a8-a777f6cdb3a2",
           "image_addr": "0x7f0000000000",
           "image_size": 2000000,
           "type": "elf"
          },
          {
           "arch": "x86_64",
           "code_file": "/opt/app/bin/App",
           "code_id": "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434",
           "debug_id": "e20a2268-5dc6-c165-b6aa-a12fa6765a6e",
           "image_addr": "0x400000",
           "image_size": 65536,
           "type": "elf"
          }
         ],
         "$exception_breadcrumbs": [
          {
           "category": "track",
           "data": {
            "step": "pay"
           },
           "level": "info",
           "message": "Checkout",
           "timestamp": "2026-11-30T09:59:59.000Z",
           "type": "default"
          }
         ],
         "$exception_level": "fatal",
         "$exception_list": [
          {
           "mechanism": {
            "handled": false,
            "meta": {
             "signal": {
              "address": "0x0",
              "code": 128,
              "name": "SIGTRAP",
              "number": 5
             }
            },
            "synthetic": false,
            "type": "swift_fatal"
           },
           "stacktrace": {
            "frames": [
             {
              "client_resolved": true,
              "function": "__libc_start_main",
              "image_addr": "0x7f0000000000",
              "in_app": false,
              "instruction_addr": "0x7f0000001234",
              "module": "libc.so.6",
              "platform": "native"
             },
             {
              "client_resolved": true,
              "colno": 5,
              "filename": "/src/App/main.swift",
              "function": "main",
              "image_addr": "0x400000",
              "in_app": true,
              "instruction_addr": "0x401000",
              "lang": "swift",
              "lineno": 12,
              "module": "App",
              "platform": "native"
             },
             {
              "client_resolved": true,
              "colno": 9,
              "filename": "/src/App/Crash.swift",
              "function": "App.crash() -> ()",
              "image_addr": "0x400000",
              "in_app": true,
              "instruction_addr": "0x401234",
              "lang": "swift",
              "lineno": 3,
              "module": "App",
              "platform": "native"
             },
             {
              "client_resolved": true,
              "filename": "/src/App/Crash.swift",
              "function": "Swift runtime failure: Index out of range",
              "image_addr": "0x400000",
              "in_app": true,
              "inline": true,
              "instruction_addr": "0x401234",
              "lineno": 3,
              "module": "App",
              "platform": "native"
             }
            ],
            "type": "raw"
           },
           "thread_id": 100,
           "type": "Swift runtime failure: Index out of range",
           "value": "Index out of range"
          }
         ],
         "$exception_message": "Index out of range",
         "$exception_pid": 4242,
         "$exception_thread_name": "main",
         "$exception_threads": [
          {
           "crashed": false,
           "name": "worker",
           "stacktrace": {
            "frames": [
             {
              "client_resolved": true,
              "function": "__libc_start_main",
              "image_addr": "0x7f0000000000",
              "in_app": false,
              "instruction_addr": "0x7f0000001234",
              "module": "libc.so.6",
              "platform": "native"
             },
             {
              "client_resolved": true,
              "colno": 5,
              "filename": "/src/App/main.swift",
              "function": "main",
              "image_addr": "0x400000",
              "in_app": true,
              "instruction_addr": "0x401000",
              "lang": "swift",
              "lineno": 12,
              "module": "App",
              "platform": "native"
             }
            ],
            "type": "raw"
           },
           "thread_id": 101
          }
         ],
         "$exception_type": "Swift runtime failure: Index out of range",
         "$insert_id": "5c8e3a02-3f7a-4d57-9d7e-6f7f0a1b2c3d",
         "$issue_name": "Swift runtime failure: Index out of range",
         "$kernel_version": "6.1.0",
         "$lib": "cohorly-swift-linux",
         "$os": "Linux",
         "$os_version": "12",
         "cart": {
          "items": 2
         },
         "distinct_id": "user-1",
         "plan": "pro",
         "release": "App@1.2.0",
         "seats": 3,
         "time": 1796032800000
        }
        """

    /// `value` without the members the previous version did not write: the frames' kinds (its test row had
    /// none) and their language (it had none for the inlined call).
    static func withoutKindsAndLanguage(_ value: CohorlyValue) -> CohorlyValue {
        switch value {
        case .object(let members):
            return .object(
                members.filter { $0.key != CapturedException.frameKindKey && $0.key != "lang" }
                    .mapValues(withoutKindsAndLanguage))
        case .array(let items): return .array(items.map(withoutKindsAndLanguage))
        default: return value
        }
    }

    @Test func anOldRowRendersTheEventItStoodFor() throws {
        let record = try #require(QueuedException(json: Self.row))
        let old = try #require(CohorlyValue(json: Self.event))
        let new = CohorlyValue.object(record.event.properties)
        #expect(Self.withoutKindsAndLanguage(new) == Self.withoutKindsAndLanguage(old))
        // Frames without a kind follow the old positional rule: the crash site exact, the callers return
        // addresses; an inlined call has its frame's.
        let frames = try #require(new["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue)
        #expect(frames.map { $0[CapturedException.frameKindKey] } == ["return_address", "return_address", "pc", nil])
        #expect(record.exception.threads.map(\.tid) == [100, 101])
        #expect(record.exception.images.map(\.path) == ["/usr/lib/x86_64-linux-gnu/libc.so.6", "/opt/app/bin/App"])
        #expect(record.exception.breadcrumbs.map(\.message) == ["Checkout"])
        // Written again, it is the current layout.
        #expect(CohorlyValue(json: record.json)?["format"] == "cohorly-exception/1")
        #expect(QueuedException(json: record.json) == record)
    }

    @Test func anOldRowWithAsyncCallersKeepsTheirKindsAndTheImagePaths() throws {
        let row: CohorlyValue = [
            "insertId": "crash-9", "timestampMs": 1_796_032_800_000, "level": "fatal", "properties": ["k": "v"],
            "exceptions": [
                [
                    "type": "SIGSEGV", "value": "bad access", "threadId": 7, "asyncStop": "task_root",
                    "mechanism": ["type": "signal", "handled": false, "synthetic": true, "meta": [:]],
                    "frames": [
                        [
                            "instructionAddress": "0x7000", "imageAddress": "0x7000", "imagePath": "/lib/libexec.so",
                            "kind": "return_address",
                        ],
                        ["instructionAddress": "0x2300", "imageAddress": "0x2000", "kind": "async_resume"],
                        [
                            "instructionAddress": "0x2100", "imageAddress": "0x2000", "imagePath": "/app/App",
                            "kind": "pc", "resolved": true, "function": "crash()", "line": 4, "inApp": true,
                        ],
                    ],
                ]
            ],
            "images": [
                [
                    "codeFile": "/app/App", "codeId": "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434",
                    "imageAddress": "0x2000", "imageSize": 4096, "arch": "x86_64",
                ]
            ],
        ]
        let record = try #require(QueuedException(json: row.jsonString))
        let thread = try #require(record.exception.threads.first)
        #expect(thread.frames.map(\.frame) == [Frame(0x2100, kind: .pc), Frame(0x7000, kind: .returnAddress)])
        #expect(thread.async?.frames.map(\.frame) == [Frame(0x2300, kind: .asyncResume)])
        #expect(thread.async?.anchor == 0)
        #expect(thread.async?.stop == .taskRoot)
        #expect(thread.frames[0].symbols.first?.function == "crash()")
        #expect(record.exception.images.map(\.path) == ["/app/App", "/lib/libexec.so"])
        #expect(record.exception.description.mechanism == "signal")
        #expect(record.exception.synthetic)
        #expect(record.properties == ["k": "v"])
        let entry = try #require(record.event.properties["$exception_list"]?.arrayValue?.first)
        let frames = try #require(entry["stacktrace"]?["frames"]?.arrayValue)
        #expect(frames.map { $0["module"] } == ["libexec.so", "App", "App"])
    }

    @Test func anOldRowInTheQueueIsSentToTheCollector() async throws {
        let directory = temporaryDirectory()
        do {
            let store = try SQLiteQueueStore(path: directory.appendingPathComponent("queue.sqlite").path)
            _ = try store.appendPrepared(
                .exception, insertId: "5c8e3a02-3f7a-4d57-9d7e-6f7f0a1b2c3d", json: Self.row, limit: 100)
        }
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector, directory: directory)
        defer { client.shutdown() }
        #expect(client.queuedCount == 1)
        #expect(await client.flush())
        let stored = try #require(try collector.store.events(matching: EventQuery(limit: 10)).first)
        #expect(stored.event == "$exception")
        #expect(stored.insertId == "5c8e3a02-3f7a-4d57-9d7e-6f7f0a1b2c3d")
        let properties = try #require(CohorlyValue(json: stored.propertiesJSON))
        let old = try #require(CohorlyValue(json: Self.event))
        #expect(
            Self.withoutKindsAndLanguage(properties["$exception_list"] ?? nil)
                == Self.withoutKindsAndLanguage(old["$exception_list"] ?? nil))
        let read = CapturedException(exceptionEvent: properties)
        #expect(read.threads.first?.frames.first?.frame == Frame(0x40_1234, kind: .pc))
    }
}
