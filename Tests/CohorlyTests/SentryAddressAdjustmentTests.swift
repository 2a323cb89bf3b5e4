import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Sentry's `instruction_addr_adjustment` from the frame kinds: Sentry steps back into the call only for the
/// frames that were return addresses; the collector reads the kinds back.
@Suite struct SentryAddressAdjustmentTests {
    static func configuration() throws -> SentryConfiguration {
        try SentryConfiguration(dsn: "https://key@o1.ingest.sentry.io/1")
    }

    static func stacktrace(_ event: CohorlyValue) -> CohorlyValue? {
        event["exception"]?["values"]?.arrayValue?.first?["stacktrace"]
    }

    static func kinds(_ stacktrace: CohorlyValue?) -> [CohorlyValue?] {
        (stacktrace?["frames"]?.arrayValue ?? []).map { $0[CapturedException.frameKindKey] }
    }

    static func addresses(_ stacktrace: CohorlyValue?) -> [CohorlyValue?] {
        (stacktrace?["frames"]?.arrayValue ?? []).map { $0["instruction_addr"] }
    }

    /// A crash whose thread continues, after the crash site, in two async callers (task root last).
    static func asyncCrash() -> QueuedException {
        var record = SentryRecords.crash("0190a6b4-0000-7000-8000-0000000000a5")
        record.exception.threads[0].async = CapturedException.AsyncStack(
            anchor: 0, stop: .taskRoot,
            frames: [
                CapturedException.StackFrame(Frame(0x40_2000, kind: .asyncResume), inApp: true),
                CapturedException.StackFrame(Frame(0x40_3000, kind: .asyncResume), inApp: true),
            ])
        return record
    }

    @Test func aCrashIsSentAsCapturedWithAllButFirst() throws {
        let event = SentryEvent.value(SentryRecords.crash(), configuration: try Self.configuration())
        let stacktrace = Self.stacktrace(event)
        #expect(stacktrace?["instruction_addr_adjustment"] == "all_but_first")
        #expect(Self.kinds(stacktrace) == ["return_address", "return_address", "pc", nil])
        #expect(Self.addresses(stacktrace) == ["0x7f0000001234", "0x401000", "0x401234", "0x401234"])
        // The other thread captured itself: return addresses only.
        let worker = event["threads"]?["values"]?.arrayValue?.last?["stacktrace"]
        #expect(worker?["instruction_addr_adjustment"] == "all")
    }

    @Test func aHandledErrorAndAMessageAreAll() throws {
        let configuration = try Self.configuration()
        let handled = SentryEvent.value(SentryRecords.handled(), configuration: configuration)
        #expect(Self.stacktrace(handled)?["instruction_addr_adjustment"] == "all")
        #expect(Self.kinds(Self.stacktrace(handled)) == ["return_address", "return_address", "return_address"])
        let message = SentryEvent.value(SentryRecords.message(), configuration: configuration)
        let thread = message["threads"]?["values"]?.arrayValue?.first?["stacktrace"]
        #expect(thread?["instruction_addr_adjustment"] == "all")
    }

    @Test func aStackWithAsyncCallersIsNoneWithItsReturnAddressesSteppedBack() async throws {
        let event = SentryEvent.value(Self.asyncCrash(), configuration: try Self.configuration())
        let stacktrace = Self.stacktrace(event)
        #expect(stacktrace?["instruction_addr_adjustment"] == "none")
        // Oldest first: libc, main (return addresses, one byte back), the task root, its awaiting caller, the
        // crash site (exact) and the call inlined there.
        #expect(
            Self.addresses(stacktrace) == [
                "0x7f0000001233", "0x400fff", "0x403000", "0x402000", "0x401234", "0x401234",
            ])
        #expect(
            Self.kinds(stacktrace) == ["return_address", "return_address", "async_resume", "async_resume", "pc", nil])
        let frames = stacktrace?["frames"]?.arrayValue ?? []
        #expect(frames.map { $0["stack_start"] } == [nil, nil, true, nil, nil, nil])
        #expect(stacktrace?[CapturedException.asyncStopKey] == "task_root")
        let refused = try await relayErrors([event])
        #expect(refused == [], "\(refused)")
    }

    @Test func theCollectorHoldsTheFramesAsTheDeviceHadThem() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        var sentry = try SentryConfiguration(dsn: "http://test-token@127.0.0.1:\(collector.baseURL.port ?? 0)/1")
        sentry.sessions = false
        let client = Cohorly(sentry: sentry, options: testOptions(temporaryDirectory()))
        defer { client.shutdown() }
        let record = Self.asyncCrash()
        _ = try client.enqueuePrepared(record)
        _ = try client.enqueuePrepared(SentryRecords.handled())
        #expect(await client.flush())
        let events = try collector.store.events(matching: EventQuery(event: "$exception"))
        let stored = try #require(events.first { $0.insertId == record.insertId })
        let crash = CapturedException(exceptionEvent: CohorlyValue(json: stored.propertiesJSON) ?? [:])
        let sent = record.exception.threads[0]
        #expect(crash.threads[0].frames.map(\.frame) == sent.frames.map(\.frame))
        #expect(crash.threads[0].async?.frames.map(\.frame) == sent.async?.frames.map(\.frame))
        #expect(crash.threads[0].async?.anchor == 0)
        #expect(crash.threads[0].async?.stop == .taskRoot)
        #expect(crash.threads[0].frames[0].symbols.map(\.function) == sent.frames[0].symbols.map(\.function))
        #expect(crash.threads[1].frames.map(\.frame) == record.exception.threads[1].frames.map(\.frame))
        let handled = try #require(events.first { $0.insertId != record.insertId })
        let error = CapturedException(exceptionEvent: CohorlyValue(json: handled.propertiesJSON) ?? [:])
        #expect(error.threads[0].frames.allSatisfy { $0.frame.kind == .returnAddress })
    }
}
