import CohorlyCrashModel
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore
@testable import CohorlySentryIngestion

/// A Sentry stacktrace stored in PostHog's shape: the frames' kinds from `instruction_addr_adjustment` when they
/// carry none (any Sentry SDK), the return addresses restored when they were sent stepped back (`none`).
@Suite struct SentryFrameKindReadingTests {
    static func stored(_ adjustment: String?, _ frames: [JSONValue]) -> [JSONValue?] {
        var stacktrace: [String: JSONValue] = ["frames": .array(frames)]
        if let adjustment { stacktrace["instruction_addr_adjustment"] = .string(adjustment) }
        return SentryEventRecord.frames(.object(stacktrace)).map {
            $0[CapturedException.frameKindKey]
        }
    }

    static let frames: [JSONValue] = [
        ["instruction_addr": "0x7000"], ["instruction_addr": "0x2100", "function": "outer"],
        ["instruction_addr": "0x2100", "function": "inlined"],
    ]

    @Test func theAdjustmentGivesTheKinds() {
        #expect(Self.stored("all_but_first", Self.frames) == ["return_address", "pc", nil])
        #expect(Self.stored("all", Self.frames) == ["return_address", "return_address", nil])
        #expect(Self.stored("none", Self.frames) == ["pc", "pc", nil])
        #expect(Self.stored("auto", Self.frames) == [nil, nil, nil])
        #expect(Self.stored(nil, Self.frames) == [nil, nil, nil])
        // A frame's own kind wins.
        var own = Self.frames
        own[1] = ["instruction_addr": "0x2100", "function": "outer", CapturedException.frameKindKey: "async_resume"]
        #expect(Self.stored("all_but_first", own) == ["return_address", "async_resume", nil])
    }

    @Test func aReturnAddressSentSteppedBackIsStoredAsTheReturnAddress() {
        let frames: [JSONValue] = [
            ["instruction_addr": "0x6fff", CapturedException.frameKindKey: "return_address"],
            ["instruction_addr": "0x20ff", "function": "outer", CapturedException.frameKindKey: "return_address"],
            ["instruction_addr": "0x20ff", "function": "inlined"],
            ["instruction_addr": "0x2300", CapturedException.frameKindKey: "async_resume"],
            ["instruction_addr": "0x2400", CapturedException.frameKindKey: "pc"],
        ]
        let stacktrace: JSONValue = ["instruction_addr_adjustment": "none", "frames": .array(frames)]
        let stored = SentryEventRecord.frames(stacktrace)
        #expect(stored.map { $0["instruction_addr"] } == ["0x7000", "0x2100", "0x2100", "0x2300", "0x2400"])
        #expect(stored[2]["inline"] == true)
        // Under any other adjustment the addresses are kept as sent.
        let kept = SentryEventRecord.frames(["instruction_addr_adjustment": "all", "frames": .array(frames)])
        #expect(kept.map { $0["instruction_addr"] } == frames.map { $0["instruction_addr"] })
    }
}
