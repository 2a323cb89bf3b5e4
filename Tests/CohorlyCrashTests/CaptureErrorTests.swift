import Cohorly
import CohorlyCollector
import Foundation
import Synchronization
import Testing

@testable import CohorlyCrash

/// An error with a description of its own.
struct OrderParseError: Error, CustomStringConvertible {
    var line: Int
    var description: String { "bad order at line \(line)" }
}

/// Throws, catches and captures in one function: the captured stack's innermost frame must be this function.
@inline(never)
func parseOrderAndCapture(_ cohorly: Cohorly, properties: Properties = [:]) {
    do {
        try throwOrderParseError(line: 3)
    } catch {
        cohorly.captureError(error, properties: properties)
    }
}

@inline(never)
func throwOrderParseError(line: Int) throws { throw OrderParseError(line: line) }

@inline(never)
func reportMissingReceipt(_ cohorly: Cohorly) {
    cohorly.captureMessage("payment provider sent no receipt\norder 42")
}

/// A handled error in a loop: one capture site, `count` captures.
@inline(never)
func failInALoop(_ cohorly: Cohorly, count: Int) {
    for line in 0..<count {
        do { try throwOrderParseError(line: line) } catch { cohorly.captureError(error) }
    }
}

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)
    var now: ContinuousClock.Instant { instant.withLock { $0 } }
    func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
}

/// Handled errors against the real collector over loopback: captured on the caller, symbolicated on the device,
/// sent at once through the client's queue, rate-limited per fingerprint.
@Suite struct CaptureErrorTests {
    struct Setup {
        let collector: Collector
        let client: Cohorly
        let root: URL

        init(posthog: Bool = false) throws {
            var configuration = CollectorConfiguration()
            configuration.tokens = ["test-token", "phc_test"]
            collector = try Collector(configuration: configuration)
            try collector.start()
            root = try makeTemporaryDirectory("capture-error")
            var options = CohorlyOptions()
            options.storageDirectory = root.appendingPathComponent("storage")
            options.flushInterval = 3600
            options.flushAt = 1_000_000
            options.loadFeatureFlags = false
            options.logHandler = { _ in }
            if posthog {
                client = Cohorly(
                    posthog: try PostHogConfiguration(host: collector.baseURL, apiKey: "phc_test"), options: options)
            } else {
                client = Cohorly(apiHost: collector.baseURL, token: "test-token", options: options)
            }
        }

        func exceptions() throws -> [CohorlyValue] {
            try collector.store.events(matching: EventQuery(event: "$exception")).compactMap {
                CohorlyValue(json: $0.propertiesJSON)
            }
        }

        func finish() {
            client.shutdown()
            collector.stop()
            try? FileManager.default.removeItem(at: root)
        }
    }

    /// The frames of the event's exception, innermost (the capture site) first, physical frames only.
    static func siteFrames(_ event: CohorlyValue) -> [CohorlyValue] {
        let frames = event["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? []
        return frames.reversed().filter { $0["inline"] != true }
    }

    @Test(arguments: [false, true]) func aThrownErrorArrivesWithTheCatchingFunctionsFrame(posthog: Bool) async throws {
        let setup = try Setup(posthog: posthog)
        defer { setup.finish() }
        setup.client.identify("error-user")
        setup.client.register(["plan": "pro"])
        parseOrderAndCapture(setup.client, properties: ["order": "A-1"])
        #expect(await setup.client.flush())
        let events = try setup.exceptions()
        try #require(events.count == 1)
        let event = events[0]
        #expect(event["$exception_level"] == "error")
        #expect(event["distinct_id"] == "error-user")
        #expect(event["plan"] == "pro")
        #expect(event["order"] == "A-1")
        let exception = try #require(event["$exception_list"]?.arrayValue?.first)
        #expect(exception["type"] == "CohorlyCrashTests.OrderParseError")
        #expect(exception["value"] == "bad order at line 3")
        #expect(exception["mechanism"]?["type"] == "generic")
        #expect(exception["mechanism"]?["handled"] == true)
        #expect(exception["mechanism"]?["synthetic"] == false)
        // The innermost frame is the function that caught the error, symbolicated on the device, in the app.
        let site = try #require(Self.siteFrames(event).first)
        let function = try #require(site["function"]?.stringValue)
        #expect(function.contains("parseOrderAndCapture"), "\(function)")
        #expect(site["filename"]?.stringValue?.hasSuffix("CaptureErrorTests.swift") == true)
        #expect(site["in_app"] == true)
        #expect(site["platform"] == "native")
        // Its caller is further out; the SDK's own frames are not in the stack.
        let functions = Self.siteFrames(event).compactMap { $0["function"]?.stringValue }
        #expect(functions.contains { $0.contains("aThrownErrorArrivesWithTheCatchingFunctionsFrame") })
        #expect(!functions.contains { $0.contains("captureError") || $0.contains("LiveStack") })
        #expect(
            EventSchema.violations(event.objectValue ?? [:], level: "error", handled: true, mechanisms: ["generic"])
                == [])
        let images = event["$debug_images"]?.arrayValue ?? []
        #expect(
            images.contains {
                $0["image_addr"] == site["image_addr"] && $0["code_file"]?.stringValue == LiveStack.executablePath
            })
    }

    @Test func theMessageVariantIsASyntheticHandledError() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        reportMissingReceipt(setup.client)
        #expect(await setup.client.flush())
        let event = try #require(try setup.exceptions().first)
        let exception = try #require(event["$exception_list"]?.arrayValue?.first)
        #expect(exception["type"] == "payment provider sent no receipt")
        #expect(exception["value"] == "payment provider sent no receipt\norder 42")
        #expect(exception["mechanism"]?["synthetic"] == true)
        #expect(exception["mechanism"]?["handled"] == true)
        let site = try #require(Self.siteFrames(event).first)
        #expect(site["function"]?.stringValue?.contains("reportMissingReceipt") == true)
    }

    @Test func aCaptureInALoopIsRateLimitedAndTheNextEventCarriesTheCount() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        let clock = ManualClock()
        HandledErrors.setClock({ clock.now }, for: setup.client)
        CohorlyCrash.setHandledErrorOptions(
            HandledErrorOptions(maxPerFingerprint: 3, window: .seconds(60)), for: setup.client)
        failInALoop(setup.client, count: 3 + 5)
        #expect(await setup.client.flush())
        let first = try setup.exceptions()
        #expect(first.count == 3)
        #expect(first.allSatisfy { $0["$exception_suppressed_count"] == nil })
        // Another site is another fingerprint: not limited by the first one's count.
        parseOrderAndCapture(setup.client)
        #expect(await setup.client.flush())
        #expect(try setup.exceptions().count == 4)
        // A new window: the first event of the fingerprint carries how many were dropped.
        clock.advance(.seconds(61))
        failInALoop(setup.client, count: 1)
        #expect(await setup.client.flush())
        let all = try setup.exceptions()
        #expect(all.count == 5)
        #expect(all.last?["$exception_suppressed_count"] == 5)
    }

    @Test func nothingIsSentForAnOptedOutUser() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        setup.client.optOut()
        parseOrderAndCapture(setup.client)
        reportMissingReceipt(setup.client)
        setup.client.optIn()
        setup.client.track("after opt-in")
        #expect(await setup.client.flush())
        #expect(try setup.exceptions().isEmpty)
        #expect(try setup.collector.store.events(matching: EventQuery(event: "after opt-in")).count == 1)
    }

    @Test func anErrorCapturedRightBeforeShutdownIsKeptForTheNextLaunch() async throws {
        let setup = try Setup()
        defer { setup.finish() }
        // Raw frames: the event is made in microseconds, well inside shutdown's 5 s wait even on a loaded machine.
        CohorlyCrash.setHandledErrorOptions(
            HandledErrorOptions(events: ExceptionEventOptions(symbolicate: false)), for: setup.client)
        parseOrderAndCapture(setup.client)
        setup.client.shutdown()  // waits for the capture's event, then commits the queue
        var options = CohorlyOptions()
        options.storageDirectory = setup.root.appendingPathComponent("storage")
        options.flushInterval = 3600
        options.loadFeatureFlags = false
        options.logHandler = { _ in }
        let next = Cohorly(apiHost: setup.collector.baseURL, token: "test-token", options: options)
        defer { next.shutdown() }
        #expect(await next.flush())
        let events = try setup.exceptions()
        #expect(events.count == 1)
        #expect(events.first?["$exception_list"]?.arrayValue?.first?["type"] == "CohorlyCrashTests.OrderParseError")
    }

    @Test func theRateLimiterCountsPerFingerprintAndWindow() {
        var limiter = HandledErrorRateLimiter(limit: 2, window: .seconds(10))
        let start = ContinuousClock.now
        #expect(limiter.admit("a", now: start) == .send(suppressed: 0))
        #expect(limiter.admit("a", now: start + .seconds(1)) == .send(suppressed: 0))
        #expect(limiter.admit("a", now: start + .seconds(2)) == .suppress)
        #expect(limiter.admit("b", now: start + .seconds(2)) == .send(suppressed: 0))
        #expect(limiter.admit("a", now: start + .seconds(9)) == .suppress)
        #expect(limiter.admit("a", now: start + .seconds(10)) == .send(suppressed: 2))
        #expect(limiter.admit("a", now: start + .seconds(11)) == .send(suppressed: 0))
        #expect(limiter.admit("a", now: start + .seconds(12)) == .suppress)
    }

    @Test func aPrivateTypesNameHasNoBuildSpecificAddress() {
        struct Hidden: Error {}
        let name = HandledErrors.typeName(Hidden.self)
        #expect(!name.contains("unknown context"), "\(name)")
        #expect(name.hasSuffix("Hidden"))
    }
}
