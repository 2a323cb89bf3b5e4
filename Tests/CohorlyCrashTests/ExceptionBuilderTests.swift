import Cohorly
@testable import CohorlyCrash
import CohorlySymbols
import Foundation
import Testing

@Suite("Crash report → $exception event")
struct ExceptionBuilderTests {
    static func fixture() throws -> CrashReport {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/reports/null-write.json")
        return try CrashReport.decode(Data(contentsOf: url))
    }

    @Test func signalCrashBecomesAFatalExceptionWithNativeFramesAndTheDebugImagesTheyUse() throws {
        let report = try Self.fixture()
        let event = ExceptionBuilder.make(from: report)
        #expect(event.name == "$exception")
        let p = event.properties
        #expect(p["$insert_id"] == .string(report.insertId))
        #expect(p["time"] == .int(Int(report.timestampMs)))
        #expect(p["$exception_level"] == "fatal")
        #expect(p["distinct_id"] == "demo-user")
        #expect(p["release"] == "CrashDemo@1.0.0")
        #expect(p["$os_version"] == report.context["$os_version"])
        #expect(p["$lib"] == "cohorly-swift-linux")
        guard case .array(let list)? = p["$exception_list"], case .object(let exception)? = list.first else {
            Issue.record("no $exception_list")
            return
        }
        #expect(exception["type"] == "SIGSEGV")
        #expect(exception["value"] == "Segmentation fault: address not mapped at 0x0")
        guard case .object(let mechanism)? = exception["mechanism"] else { return }
        #expect(mechanism["handled"] == false && mechanism["synthetic"] == false)
        #expect(mechanism["type"] == "signal")
        guard case .object(let stacktrace)? = exception["stacktrace"], case .array(let frames)? = stacktrace["frames"]
        else { return }
        let crashed = try #require(report.crashedThread)
        #expect(frames.count == crashed.frames.count)
        // Oldest first: the last frame is the crashing instruction, in the app, named by the file alone.
        guard case .object(let last)? = frames.last else { return }
        #expect(last["instruction_addr"] == .string(crashed.frames[0].description))
        #expect(last["platform"] == "native")
        #expect(last["module"] == "CrashDemo")
        #expect(last["in_app"] == true)
        #expect(last["function"] == nil)  // no symbols given: raw
        guard case .array(let images)? = p["$debug_images"], case .object(let image)? = images.first else { return }
        // Only the images the frames use.
        let used = Set(report.allThreads.flatMap(\.frames).compactMap { report.module(containing: $0)?.path })
        #expect(images.count == used.count && images.count < report.modules.count)
        #expect(image["code_id"] == .string(report.modules[0].buildId))
        #expect(image["type"] == "elf")
        #expect(EventSchema.violations(p) == [])
        guard case .array(let threads)? = p["$exception_threads"] else { return }
        #expect(threads.count == report.threads.count)
    }

    @Test func typeAndValueComeFromTheSwiftMessageOrTheCxxException() throws {
        var report = try Self.fixture()
        report.message = "CrashDemo/main.swift:12: Fatal error: Index out of range\n"
        report.mechanism = .swiftFatal
        #expect(ExceptionBuilder.describe(report).type == "Fatal error")
        #expect(ExceptionBuilder.describe(report).value == "Index out of range")
        report.message = "CrashDemo/main.swift:3: Precondition failed: demo precondition\n"
        #expect(ExceptionBuilder.describe(report).type == "Precondition failed")
        #expect(ExceptionBuilder.describe(report).value == "demo precondition")
        report.message = "Could not cast value of type 'Swift.Int' to 'Swift.String'."
        #expect(ExceptionBuilder.describe(report).type == "Fatal error")
        #expect(ExceptionBuilder.describe(report).value.hasPrefix("Could not cast"))
        report.message = nil
        report.cxx = .init(type: "std::runtime_error", what: "bad")
        #expect(
            ExceptionBuilder.describe(report)
                == .init(
                    type: "std::runtime_error", value: "bad", mechanism: "cxx_exception",
                    issueName: "std::runtime_error: bad", source: "cxx_exception"))
    }

    @Test func aReleaseTrapIsNamedByTheSwiftRuntimeFailureFrameAtTheCrashSite() throws {
        let report = try Self.fixture()
        #expect(ExceptionBuilder.describe(report).type == "SIGSEGV")
        #expect(ExceptionBuilder.describe(report).issueName == nil)
        let site = [
            SymbolicatedFrame(
                function: "Swift runtime failure: Index out of range", rawFunction: nil, file: "<compiler-generated>",
                line: 0, column: 0, isInlined: true, symbolOffset: nil),
            SymbolicatedFrame(
                function: "CrashDemo.crashIndexOutOfRange() -> ()",
                rawFunction: "$s9CrashDemo20crashIndexOutOfRangeyyF",
                file: "/src/CrashKind.swift", line: 92, column: 30, isInlined: false, symbolOffset: nil),
        ]
        let description = ExceptionBuilder.describe(report, crashSite: site)
        #expect(description.type == "Swift runtime failure: Index out of range")
        #expect(description.mechanism == "swift_fatal")
        #expect(description.issueName == "Swift runtime failure: Index out of range")
        // The frames: the physical one first, then the inlined call, same address, crash site last.
        let crashed = try #require(report.crashedThread)
        var threads: [[[SymbolicatedFrame]]?] = [crashed.frames.indices.map { $0 == 0 ? site : [] }]
        threads += report.threads.map { _ in nil }
        let event = ExceptionBuilder.make(from: report, symbols: ReportSymbols(threads: threads))
        let frames = try #require(
            event.properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue)
        #expect(frames.count == crashed.frames.count + 1)
        let physical = frames[frames.count - 2]
        let inlined = frames[frames.count - 1]
        // The wire's `function` reads as the stack text does; the full name is `raw_function` (issue 38, item 3).
        #expect(physical["function"] == "crashIndexOutOfRange()")
        #expect(physical["raw_function"] == "CrashDemo.crashIndexOutOfRange() -> ()")
        #expect(physical["lineno"] == 92 && physical["colno"] == 30 && physical["lang"] == "swift")
        #expect(physical["client_resolved"] == true && physical["inline"] == nil)
        #expect(inlined["function"] == "Swift runtime failure: Index out of range")
        #expect(inlined["inline"] == true && inlined["lineno"] == nil)
        #expect(inlined["instruction_addr"] == physical["instruction_addr"])
        #expect(event.properties["$exception_type"] == "Swift runtime failure: Index out of range")
        #expect(EventSchema.violations(event.properties) == [])
    }

    @Test func inAppIsTheExecutableAndItsNeighboursUnlessTheAppSaysOtherwise() {
        let rules = InAppRules()
        let exe = "/opt/shop/bin/shop"
        #expect(rules.isInApp(path: exe, executable: exe))
        #expect(rules.isInApp(path: "/opt/shop/bin/libShopKit.so", executable: exe))
        #expect(rules.isInApp(path: "/opt/shop/bin/lib/libShopKit.so", executable: exe))
        #expect(!rules.isInApp(path: "/opt/shop/bin/libswiftCore.so", executable: exe))
        #expect(!rules.isInApp(path: "/opt/shop/bin/libFoundationEssentials.so", executable: exe))
        #expect(!rules.isInApp(path: "/usr/lib/x86_64-linux-gnu/libc.so.6", executable: exe))
        #expect(!rules.isInApp(path: "/usr/lib/libShopPlugin.so", executable: exe))
        let custom = InAppRules(include: ["libShopPlugin"], exclude: ["/opt/shop/bin/libVendor"])
        #expect(custom.isInApp(path: "/usr/lib/libShopPlugin.so", executable: exe))
        #expect(!custom.isInApp(path: "/opt/shop/bin/libVendor.so", executable: exe))
        #expect(custom.isInApp(path: exe, executable: exe))
    }

    @Test func superPropertiesOfTheCrashTimeContextAreOnTheEvent() throws {
        var report = try Self.fixture()
        report.context["super_properties"] = ["plan": "pro", "$os": "Custom OS", "distinct_id": "not-this"]
        report.context["properties"] = ["plan": "free", "screen": "cart"]
        let p = ExceptionBuilder.make(from: report).properties
        #expect(p["plan"] == "pro")  // super properties win over the free-form crash properties
        #expect(p["screen"] == "cart")
        #expect(p["$os"] == "Custom OS")  // and over the device fields, as on every event
        #expect(p["distinct_id"] == "demo-user")
        #expect(p["super_properties"] == nil && p["properties"] == nil)
    }

    @Test func otherThreadsAreTrimmedThenDroppedToFitAndTheCutIsCounted() throws {
        let report = try Self.fixture()
        let whole = ExceptionBuilder.make(from: report)
        let size = { (event: PreparedEvent) in CohorlyValue.object(event.properties).jsonString.utf8.count }
        let crashedOnly = ExceptionBuilder.make(
            from: {
                var r = report; r.threads = []; return r
            }(), options: .init(maxEventBytes: 10_000_000))
        // A cap between "crashed thread alone" and "everything": threads lose frames first.
        var options = ExceptionEventOptions()
        options.maxEventBytes =
            size(crashedOnly) + (size(whole) - size(crashedOnly)) / 2 + CapturedException.eventSizeMargin
        let trimmed = ExceptionBuilder.make(from: report, options: options)
        #expect(size(trimmed) <= options.maxEventBytes)
        #expect((trimmed.properties["$exception_frames_dropped"]?.intValue ?? 0) > 0)
        #expect(trimmed.properties["$exception_list"] == whole.properties["$exception_list"])
        // A cap that leaves room for the crashed thread only: every other thread goes, counted.
        options.maxEventBytes = size(crashedOnly) + CapturedException.eventSizeMargin + 40
        let dropped = ExceptionBuilder.make(from: report, options: options)
        #expect(dropped.properties["$exception_threads_dropped"] == .int(report.threads.count))
        #expect(dropped.properties["$exception_threads"] == [])
        #expect(dropped.properties["$exception_list"] == whole.properties["$exception_list"])
        #expect(EventSchema.violations(dropped.properties) == [])
    }

    @Test func debugIdFollowsTheByteSwappedGUIDRule() {
        #expect(
            ExceptionBuilder.debugId(fromBuildId: "02547a300b1c2d3e4f5061728394a5b6c7d8e9f0")
                == "307a5402-1c0b-3e2d-4f50-61728394a5b6")
        #expect(ExceptionBuilder.debugId(fromBuildId: "") == "")
        // A short (8-byte) build id is padded with zeros.
        #expect(ExceptionBuilder.debugId(fromBuildId: "0102030405060708") == "04030201-0605-0807-0000-000000000000")
    }

    @Test func aSalvagedReportWithoutItsCrashedThreadStillMakesAnEvent() throws {
        var report = try Self.fixture()
        let others = report.threads
        report.crashedThread = nil
        report.complete = false
        // Symbols follow allThreads: without a crashed thread, the first entry is the first other thread.
        let symbols = ReportSymbols(
            threads: others.map { thread in
                thread.frames.map { _ in
                    [
                        SymbolicatedFrame(
                            function: "worker()", rawFunction: nil, file: "w.c", line: 1, column: 0, isInlined: false,
                            symbolOffset: nil)
                    ]
                }
            })
        let p = ExceptionBuilder.make(from: report, symbols: symbols).properties
        #expect(p["$exception_report_complete"] == false)
        #expect(p["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"] == [])
        let first = p["$exception_threads"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue?.last
        #expect(first?["function"] == "worker()")
    }
}
