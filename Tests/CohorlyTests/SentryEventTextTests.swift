import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// The event text is written straight into bytes (`SentryEvent.bytes`), each object's members in sorted order:
/// it must be exactly what `CohorlyValue.jsonString` makes of the same tree — valid, compact, keys sorted —
/// for every kind of record, with text that needs escaping, and when trimmed to Sentry's size limit.
struct SentryEventTextTests {
    static func configurations() throws -> [SentryConfiguration] {
        var other = try SentryConfiguration(dsn: "https://key@example.com/prefix/2")
        other.dist = "77"
        other.release = "App@2"
        other.environment = "staging"
        return [try SentryConfiguration(dsn: "https://key@example.com/1"), other]
    }

    /// A crash whose texts need escaping, with non-ASCII and over-long tag keys and the mapped fields set.
    static func escaped() -> QueuedException {
        var record = SentryRecords.crash("0190a6b4-0000-7000-8000-0000000000b1")
        record.properties["$hostname"] = "host\u{1}\"q\"\\"
        record.properties["ünï"] = "välue\t\r\n"
        record.properties["Zed"] = 1.5
        record.properties["issue_name"] = ["x": 1]
        record.properties["dist"] = "d1"
        record.properties[String(repeating: "k", count: 201)] = "long key"
        record.exception.description.value = String(repeating: "é\u{7}", count: 5000)
        return record
    }

    /// A crash of `threads` threads of `frames` frames each, with long function names.
    static func large(threads: Int, frames: Int) -> QueuedException {
        var record = SentryRecords.crash("0190a6b4-0000-7000-8000-0000000000b2")
        let stack = (0..<frames).map { depth in
            CapturedException.StackFrame(
                Frame(UInt64(0x40_1000 + depth * 0x40), kind: .returnAddress), inApp: depth < 17,
                symbols: [
                    FrameSymbol(
                        function: String(repeating: "App.step\(depth)(input:) -> Int ", count: 8),
                        rawFunction: "$s3App4stepyyF", file: "/src/App/Steps.swift", line: 29, column: 5,
                        inlined: false)
                ])
        }
        record.exception.threads = (0..<threads).map { index in
            CapturedException.Thread(tid: Int32(index), name: "t\(index)", crashed: index == 0, frames: stack)
        }
        return record
    }

    @Test func theTextIsTheSortedCompactJSONOfTheEvent() throws {
        let records = [
            SentryRecords.crash(), SentryRecords.signal(), SentryRecords.handled(), SentryRecords.message(),
            SentryRecords.hang(), SentryRecords.abnormalExit(at: 1_796_032_800_123),
            SentryAddressAdjustmentTests.asyncCrash(), Self.escaped(),
        ]
        for configuration in try Self.configurations() {
            for record in records {
                let text = SentryEvent.json(record, configuration: configuration)
                let parsed = try #require(CohorlyValue(bytes: text), "\(record.insertId)")
                #expect(Array(parsed.jsonString.utf8) == text, "\(record.insertId)")
                #expect(parsed == SentryEvent.value(record, configuration: configuration))
            }
        }
        let escaped = SentryEvent.value(Self.escaped(), configuration: try Self.configurations()[0])
        #expect(escaped["server_name"] == "host\u{1}\"q\"\\")
        #expect(escaped["tags"]?["ünï"] == "välue\t\r\n")
        #expect(escaped["extra"]?[String(repeating: "k", count: 201)] == "long key")
        #expect(escaped["exception"]?["values"]?.arrayValue?.first?["value"]?.stringValue?.count == 8192)
    }

    @Test func aTooLargeEventIsTrimmedAndSaysWhatWasCut() throws {
        let configuration = try Self.configurations()[0]
        // Other threads go first, then the oldest frames of the crashed stack.
        for (record, key) in [
            (Self.large(threads: 40, frames: 400), "$exception_threads_dropped"),
            (Self.large(threads: 1, frames: 4000), "$exception_frames_dropped"),
        ] {
            let text = SentryEvent.json(record, configuration: configuration)
            #expect(text.count <= SentryEvent.maxItemBytes)
            let parsed = try #require(CohorlyValue(bytes: text))
            #expect(Array(parsed.jsonString.utf8) == text)
            #expect((parsed["extra"]?[key]?.intValue ?? 0) > 0, "\(key)")
        }
    }
}
