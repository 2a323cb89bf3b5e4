import Cohorly
import Testing

@testable import CohorlyCrash

/// Frame kinds and async callers survive the `$exception` wire: the device writes them, every reader reads them
/// back, so no server re-guesses which address is a return address.
@Suite struct ExceptionWireKindTests {
    /// A report whose crashed thread ran an async function: physical frames 0 (the crash site) and 1 (the
    /// funclet the chain continues from), two async callers, then two executor frames.
    static func asyncReport() -> CrashReport {
        var report = CrashReport(
            insertId: "wire-1", timestampMs: 1_796_000_000_000, pid: 9, executable: "/srv/App", mechanism: .signal)
        report.signal = CrashReport.Signal(number: 4, name: "SIGILL", code: 2, address: Address(0x1010))
        report.modules = [
            CrashReport.Module(
                path: "/srv/App", base: Address(0x1000), size: Address(0x1000), buildId: "0102030405060708"),
            CrashReport.Module(
                path: "/usr/lib/libswift_Concurrency.so", base: Address(0x9000), size: Address(0x1000), buildId: "aa"),
        ]
        report.crashedThread = CrashReport.Thread(
            tid: 9, name: "worker", crashed: true,
            frames: [
                Frame(0x1010, kind: .pc), Frame(0x1020, kind: .returnAddress), Frame(0x9100, kind: .returnAddress),
                Frame(0x9200, kind: .returnAddress),
            ],
            async: AsyncChain(
                anchor: 1, stop: .taskRoot,
                frames: [Frame(0x1300, kind: .asyncResume), Frame(0x1400, kind: .asyncResume)]))
        report.threads = [
            CrashReport.Thread(tid: 10, name: "idle", crashed: false, frames: Frame.interrupted([Address(0x9300)]))
        ]
        report.complete = true
        return report
    }

    @Test func theEventCarriesEveryKindAndTheAsyncCallersInCallerOrder() throws {
        let properties = ExceptionBuilder.make(from: Self.asyncReport()).properties
        let stacktrace = try #require(properties["$exception_list"]?.arrayValue?.first?["stacktrace"])
        let frames = try #require(stacktrace["frames"]?.arrayValue)
        // Oldest first: executor frames, then the task's root caller, the awaiting caller, the funclet, the crash site.
        #expect(
            frames.compactMap { $0["instruction_addr"]?.stringValue } == [
                "0x9200", "0x9100", "0x1400", "0x1300", "0x1020", "0x1010",
            ])
        #expect(
            frames.compactMap { $0[CapturedException.frameKindKey]?.stringValue } == [
                "return_address", "return_address", "async_resume", "async_resume", "return_address", "pc",
            ])
        #expect(stacktrace[CapturedException.asyncStopKey] == "task_root")
        #expect(frames.map { $0["in_app"] } == [false, false, true, true, true, true])
        #expect(EventSchema.violations(properties) == [])
        // The other thread's frame 0 is an exact PC too (it was interrupted).
        let other = properties["$exception_threads"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue
        #expect(other?.first?[CapturedException.frameKindKey] == "pc")
    }

    @Test func readingTheEventBackGivesTheKindsAndTheChain() throws {
        let report = Self.asyncReport()
        let properties = CohorlyValue.object(ExceptionBuilder.make(from: report).properties)
        let read = CapturedException(exceptionEvent: properties)
        let crashed = try #require(read.threads.first)
        #expect(crashed.frames.map(\.frame) == report.crashedThread?.frames)
        #expect(crashed.async?.anchor == 1)
        #expect(crashed.async?.stop == .taskRoot)
        #expect(crashed.async?.frames.map(\.frame) == report.crashedThread?.async?.frames)
        #expect(read.threads.dropFirst().first?.frames.map(\.frame) == [Frame(0x9300, kind: .pc)])
        #expect(read.description.summary == "SIGILL: Illegal instruction at 0x1010")
        #expect(read.insertId == "wire-1")
    }
}
