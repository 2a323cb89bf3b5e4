import CohorlyCrashModel
import Foundation
import Testing

/// An event's exception list and threads held by the model as they arrived
/// (``CapturedException/init(receivedEvent:)``): each entry with its whole mechanism, module, thread id and its
/// own stack of the model's frames, each frame's members the model has no field for beside it; rendered back
/// member for member, through the model's JSON too.
/// The event: the chained Sentry crash the collector stored (fixtures/collector/sentry-answers/events.json).
@Suite struct ListedExceptionTests {
    static let answers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/collector/sentry-answers/events.json")

    static func chained() throws -> CohorlyValue {
        let text = try String(contentsOf: answers, encoding: .utf8)
        let events = try #require(CohorlyValue(json: text)?["events"]?.arrayValue)
        return try #require(events.last?["properties"])
    }

    /// An event a device made from the model (a real report's rendering, with other threads) renders back as it
    /// arrived without the list or threads held a second time: its model's JSON is the one the plain reading gives.
    @Test func aDevicesOwnEventHoldsNothingTwice() throws {
        let report = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/reports/null-write.json")
        let made = CapturedException(report: try CrashReport.read([UInt8](Data(contentsOf: report))))
        #expect(made.threads.count > 1)
        let event = CohorlyValue.object(made.eventProperties)
        let received = CapturedException(receivedEvent: event)
        #expect(received.listedThreads == nil)
        guard case .listed(let list) = received.exceptionList else {
            Issue.record("not listed: \(received.exceptionList)")
            return
        }
        #expect(list.count == 1 && list.allSatisfy { $0.sent == nil && $0.stack == nil })
        #expect(received.jsonValue == CapturedException(exceptionEvent: event).jsonValue)
        for key in [CapturedException.exceptionListProperty, CapturedException.threadsProperty] {
            #expect(received.eventProperties[key] == event[key], "\(key)")
        }
    }

    @Test func aChainedListIsTheModelsEntryForEntryFrameForFrame() throws {
        let properties = try Self.chained()
        let crash = CapturedException(receivedEvent: properties)
        guard case .listed(let list) = crash.exceptionList else {
            Issue.record("not listed: \(crash.exceptionList)")
            return
        }
        #expect(list.count == 2)
        let raised = list[0]
        #expect(raised.mechanism?["help_link"] == "https://example.com/abort")
        #expect(raised.mechanism?["meta"]?["errno"]?["name"] == "ENOENT")
        #expect(raised.module == "libc")
        #expect(raised.threadId == 101)
        let frames = try #require(raised.stack?.frames)
        #expect(frames.count == 4)
        #expect(frames.map(\.inlined) == [false, false, true, false])
        #expect(frames[3].frame?.frame == Frame(Address(0x7f00_0020_1000), kind: .pc))
        #expect(frames[1].frame?.symbols.first?.function == "App.crash()")
        #expect(frames[0].sent.kept["symbol_addr"] == "0x7f00000010f0")
        let cause = list[1]
        #expect(cause.mechanism?["type"] == "chained")
        #expect(cause.stack?.frames.count == 2)
        #expect(cause.stack?.frames[1].frame?.symbols.first?.file == "Load.swift")
        #expect(cause.stack?.frames[1].sent.kept["vars"] == ["key": "\"port\""])
        #expect(cause.stack?.frames[1].sent.kept["pre_context"] == ["let table = try read()"])
        #expect(crash.listedThreads?.count == 2)
        #expect(crash.listedThreads?.first?.stack?.frames.first?.frame?.symbols.first?.function == "futex_wait")

        for model in [crash, try #require(CapturedException(jsonValue: crash.jsonValue))] {
            let rendered = model.eventProperties
            for member in [CapturedException.exceptionListProperty, CapturedException.threadsProperty] {
                #expect(rendered[member] == properties[member], "\(member)")
            }
            #expect(model.exceptionList == crash.exceptionList)
            #expect(model.listedThreads == crash.listedThreads)
        }
        // Read by the event reader alone, the list is the model's rendering again (its first entry), as before.
        let read = CapturedException(exceptionEvent: properties)
        #expect(read.eventProperties[CapturedException.exceptionListProperty] != properties["$exception_list"])
        #expect(read.listedThreads == nil)
    }

    /// Entries that are not objects, and JSON of the model written before it held the list whole, render as
    /// before: the model's own entry (the collector keeps the list beside it then).
    @Test func aListNotReadWholeRendersTheModelsOwnEntry() throws {
        var properties = try Self.chained().objectValue ?? [:]
        properties[CapturedException.exceptionListProperty] = [
            properties["$exception_list"]?.arrayValue?.first ?? .null, 7,
        ]
        let crash = CapturedException(receivedEvent: .object(properties))
        let rendered = crash.eventProperties[CapturedException.exceptionListProperty]?.arrayValue
        #expect(rendered?.count == 1)
        #expect(rendered?.first?["type"] == "SIGABRT")
        var old = crash
        old.exceptionList = CapturedException.exceptionList(ofEvent: .object(properties))
        #expect(
            old.eventProperties[CapturedException.exceptionListProperty]
                == crash.eventProperties[CapturedException.exceptionListProperty])
    }
}
