import CCrashRecorder
import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// Handled errors show where they were thrown (issue 38 part 4), with real CrashDemo processes (`throw-site KIND`,
/// Examples/CrashDemo/ThrowSiteScenario.swift) and a loopback collector: a checkout catches an error thrown two
/// calls below it, in `PaymentGateway.charge`, and captures it.
@Suite("Throw sites of handled errors")
struct ThrowSiteTests {
    /// Runs `throw-site kind` and returns the run and its one event's properties.
    static func run(_ kind: String) async throws -> (CrashDemoRun, Properties) {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["demo-token"]
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        defer { collector.stop() }
        let root = try makeTemporaryDirectory("throw-site")
        defer { removeLaunchDirectory(root) }
        let environment = ["COHORLY_HOST": collector.baseURL.absoluteString, "COHORLY_TOKEN": "demo-token"]
        let run = try await runCrashDemo(
            ["throw-site", kind, "--storage", root.appendingPathComponent("storage").path],
            reportDirectory: root.appendingPathComponent("reports"), withClient: true, environment: environment)
        #expect(run.exitStatus == 0, "\(run.stdout) \(run.stderr)")
        let events = try collector.store.events(matching: EventQuery(event: "$exception", limit: 10))
        try #require(events.count == 1)
        return (run, try #require(CohorlyValue(json: events[0].propertiesJSON)?.objectValue))
    }

    /// The functions of a stacktrace's physical frames, innermost first.
    static func functions(_ stacktrace: CohorlyValue?) -> [String] {
        (stacktrace?["frames"]?.arrayValue ?? []).reversed().filter { $0["inline"] != true }.compactMap {
            $0["function"]?.stringValue
        }
    }

    static func exceptionFunctions(_ event: Properties) -> [String] {
        functions(event["$exception_list"]?.arrayValue?.first?["stacktrace"])
    }

    static func catchSites(_ event: Properties) -> [CohorlyValue] {
        (event["$exception_threads"]?.arrayValue ?? []).filter { $0["catch_site"] == true }
    }

    @Test(arguments: ["struct", "enum", "class", "rethrow", "bound", "async"])
    func theExceptionsStackIsTheThrowSiteAndTheCatchSiteFollows(kind: String) async throws {
        let (_, event) = try await Self.run(kind)
        let thrown = Self.exceptionFunctions(event)
        // The innermost frame is the function that threw, then the service that called it: both gone from the
        // catching stack, which starts at the catch.
        #expect(thrown.first?.contains("charge") == true, "\(thrown)")
        // (An async function's callers are not on the thread's stack at the throw: they await in the catch site.)
        if kind != "async" { #expect(thrown.contains { $0.contains("pay") }, "\(thrown)") }
        #expect(!thrown.contains { $0.contains("captureError") || $0.contains("will_throw") }, "\(thrown)")
        let catchSites = Self.catchSites(event)
        try #require(catchSites.count == 1, "\(event["$exception_threads"] ?? .null)")
        let caught = Self.functions(catchSites[0]["stacktrace"])
        #expect(!caught.contains { $0.contains("charge") }, "\(caught)")
        #expect(caught.first?.contains(kind == "bound" ? "run" : "checkout") == true, "\(caught)")
        if kind == "async" { #expect(caught.contains { $0.contains("run") }, "\(caught)") }
        #expect(catchSites[0]["thread_id"] == event["$exception_list"]?.arrayValue?.first?["thread_id"])
        #expect(EventSchema.violations(event, level: "error", handled: true, mechanisms: ["generic"]) == [])
    }

    @Test(arguments: ["fresh", "off"])
    func anErrorWithoutARecordedThrowHasTheCatchingStackOnly(kind: String) async throws {
        let (_, event) = try await Self.run(kind)
        let stack = Self.exceptionFunctions(event)
        #expect(!stack.contains { $0.contains("charge") }, "\(stack)")
        #expect(stack.first?.contains(kind == "off" ? "checkout" : "run") == true, "\(stack)")
        #expect(Self.catchSites(event).isEmpty)
    }

    /// What the hook and the lookup rely on: an `any Error` is the box the runtime threw (its address the key),
    /// and the box holds the error's type where the hook reads it, for struct, enum and class errors alike.
    @Test func anAnyErrorIsItsBoxAndTheBoxHoldsItsType() {
        struct StructError: Error { var code = 1 }
        enum EnumError: Error { case failed }
        final class ClassError: Error {}
        let errors: [any Error] = [StructError(), EnumError.failed, ClassError()]
        for error in errors {
            let box = unsafeBitCast(error as any Error, to: UnsafeRawPointer.self)
            let type = unsafeBitCast(Swift.type(of: error) as Any.Type, to: UnsafeRawPointer.self)
            #expect(cly_test_throw_site_box_type(box) == type, "\(Swift.type(of: error))")
        }
    }

    @Test func aHookInstalledBeforeTheSDKsIsStillCalled() async throws {
        let (run, event) = try await Self.run("chained")
        let calls = run.stdout.split(separator: "\n").first { $0.hasPrefix("chained_calls ") }
        let count = calls.flatMap { Int($0.dropFirst("chained_calls ".count)) }
        #expect(count.map { $0 >= 1 } == true, "\(run.stdout)")
        #expect(Self.exceptionFunctions(event).first?.contains("charge") == true)
    }
}
