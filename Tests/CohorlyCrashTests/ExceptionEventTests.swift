import Cohorly
import CohorlyCrash
import Foundation
import Testing

@Suite("Crash report → $exception event")
struct ExceptionEventTests {
    static func fixture() throws -> CrashReport {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/reports/null-write.json")
        return try CrashReport.decode(Data(contentsOf: url))
    }

    @Test func signalCrashBecomesAFatalExceptionWithRawFramesAndDebugImages() throws {
        let report = try Self.fixture()
        let event = ExceptionEvent.make(from: report)
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
        #expect(mechanism["handled"] == false && mechanism["synthetic"] == true)
        guard case .object(let stacktrace)? = exception["stacktrace"], case .array(let frames)? = stacktrace["frames"]
        else { return }
        let crashed = try #require(report.crashedThread)
        #expect(frames.count == crashed.frames.count)
        // Oldest first: the last frame is the crashing instruction, marked exact, in the app.
        guard case .object(let last)? = frames.last else { return }
        #expect(last["instruction_addr"] == .string(crashed.frames[0].description))
        #expect(last["addr_mode"] == "exact")
        #expect(last["in_app"] == true)
        guard case .array(let images)? = p["$debug_images"], case .object(let image)? = images.first else { return }
        #expect(images.count == report.modules.count)
        #expect(image["code_id"] == .string(report.modules[0].buildId))
        #expect(image["type"] == "elf")
        guard case .array(let threads)? = p["$exception_threads"] else { return }
        #expect(threads.count == report.threads.count)
    }

    @Test func typeAndValueComeFromTheSwiftMessageOrTheCxxException() throws {
        var report = try Self.fixture()
        report.message = "CrashDemo/main.swift:12: Fatal error: Index out of range\n"
        report.mechanism = .swiftFatal
        #expect(ExceptionEvent.describe(report).type == "Fatal error")
        #expect(ExceptionEvent.describe(report).value == "Index out of range")
        report.message = "CrashDemo/main.swift:3: Precondition failed: demo precondition\n"
        #expect(ExceptionEvent.describe(report).type == "Precondition failed")
        #expect(ExceptionEvent.describe(report).value == "demo precondition")
        report.message = "Could not cast value of type 'Swift.Int' to 'Swift.String'."
        #expect(ExceptionEvent.describe(report).type == "Fatal error")
        #expect(ExceptionEvent.describe(report).value.hasPrefix("Could not cast"))
        report.message = nil
        report.cxx = .init(type: "std::runtime_error", what: "bad")
        #expect(
            ExceptionEvent.describe(report)
                == .init(type: "std::runtime_error", value: "bad", mechanism: "cxx", synthetic: false))
    }

    @Test func debugIdFollowsTheByteSwappedGUIDRule() {
        #expect(
            ExceptionEvent.debugId(fromBuildId: "02547a300b1c2d3e4f5061728394a5b6c7d8e9f0")
                == "307a5402-1c0b-3e2d-4f50-61728394a5b6")
        #expect(ExceptionEvent.debugId(fromBuildId: "") == "")
        // A short (8-byte) build id is padded with zeros.
        #expect(ExceptionEvent.debugId(fromBuildId: "0102030405060708") == "04030201-0605-0807-0000-000000000000")
    }
}
