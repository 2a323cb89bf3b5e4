import Cohorly
import CohorlyCollector
import Foundation
import Testing

@testable import CohorlyCrash

@inline(never)
func captureHere() -> [Frame] { LiveStack.capture(skip: 0).frames }

@inline(never)
func captureOneLevelDeeper() -> [Frame] { captureHere() }

/// The shared builder of live `$exception` events (what hangs use): several threads with a subject, a mechanism
/// with extra fields, the live modules and the device's symbols, held against PostHog's rules.
@Suite struct NonFatalExceptionTests {
    /// A hang-like exception from two real stacks of this thread: the subject (innermost `captureHere`) and
    /// another (innermost `captureOneLevelDeeper`'s call into `captureHere`).
    func hangLike() -> NonFatalException {
        NonFatalException(
            type: "Hang", value: "main thread blocked for 2.5 s",
            mechanism: .init(
                type: "hang", handled: false, meta: ["duration_ms": 2500]),
            issueName: "Hang: main thread blocked",
            threads: [
                CrashReport.Thread(tid: 11, name: "worker", crashed: false, frames: captureOneLevelDeeper()),
                CrashReport.Thread(tid: 10, name: "main", crashed: true, frames: captureHere()),
            ], properties: ["$hang_duration_ms": 2500, "$exception_level": "overridden"])
    }

    @Test func aHangLikeEventHasTheSubjectThreadFirstAndTheOthersBeside() throws {
        var exception = hangLike()
        exception.modules = LiveStack.modules()
        let options = ExceptionEventOptions.default
        let symbolicator = ExceptionBuilder.makeSymbolicator(modules: exception.modules, options: options)
        let event = exception.event(
            symbols: exception.symbolicate(with: symbolicator, options: options), options: options)
        let properties = event.properties
        #expect(event.name == "$exception")
        #expect(
            EventSchema.violations(properties, level: "error", handled: false, mechanisms: ["hang"]) == [],
            "\(properties)")
        #expect(properties["$hang_duration_ms"] == 2500)
        #expect(properties["$issue_name"] == "Hang: main thread blocked")
        #expect(properties["$exception_thread_name"] == "main")
        let entry = try #require(properties["$exception_list"]?.arrayValue?.first)
        #expect(entry["thread_id"] == 10)
        #expect(entry["mechanism"]?["meta"]?["duration_ms"] == 2500)
        let subjectFunctions = (entry["stacktrace"]?["frames"]?.arrayValue ?? []).compactMap {
            $0["function"]?.stringValue
        }
        #expect(subjectFunctions.last?.contains("captureHere") == true, "\(subjectFunctions)")
        let others = try #require(properties["$exception_threads"]?.arrayValue)
        #expect(others.count == 1)
        #expect(others.first?["thread_id"] == 11)
        #expect(others.first?["name"] == "worker")
        let otherFunctions = (others.first?["stacktrace"]?["frames"]?.arrayValue ?? []).compactMap {
            $0["function"]?.stringValue
        }
        #expect(otherFunctions.suffix(2).first?.contains("captureOneLevelDeeper") == true, "\(otherFunctions)")
    }

    @Test func withoutSymbolsEveryFrameIsRawButComplete() {
        var exception = hangLike()
        exception.modules = LiveStack.modules()
        let properties = exception.event().properties
        #expect(EventSchema.violations(properties, level: "error", handled: false, mechanisms: ["hang"]) == [])
        let frames = properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        #expect(!frames.isEmpty)
        #expect(frames.allSatisfy { $0["function"] == nil && $0["instruction_addr"] != nil })
    }

    @Test func sendQueuesTheEventThroughTheClientWithItsIdentity() async throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["test-token"]
        let collector = try Collector(configuration: configuration)
        try collector.start()
        let root = try makeTemporaryDirectory("live-exception")
        defer {
            collector.stop()
            try? FileManager.default.removeItem(at: root)
        }
        var options = CohorlyOptions()
        options.storageDirectory = root
        options.flushInterval = 3600
        options.loadFeatureFlags = false
        options.logHandler = { _ in }
        let client = Cohorly(apiHost: collector.baseURL, token: "test-token", options: options)
        defer { client.shutdown() }
        client.identify("hung-user")
        #expect(NonFatalExceptionReporter.shared.send(hangLike(), to: client))
        #expect(await client.flush())
        let events = try collector.store.events(matching: EventQuery(event: "$exception"))
        try #require(events.count == 1)
        #expect(events[0].distinctId == "hung-user")
        let properties = try #require(CohorlyValue(json: events[0].propertiesJSON))
        #expect(EventSchema.violations(properties.objectValue ?? [:], level: "error", mechanisms: ["hang"]) == [])
        #expect(properties["$exception_threads"]?.arrayValue?.count == 1)
        client.optOut()
        #expect(!NonFatalExceptionReporter.shared.send(hangLike(), to: client))
    }
}
