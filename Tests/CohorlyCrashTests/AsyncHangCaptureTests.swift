import CCrashRecorder
import Cohorly
import Dispatch
import Synchronization
import TestWaiting
import Testing

@testable import CohorlyCrash

/// An actor method that blocks its thread until released: a hang inside async code.
actor BlockingActor {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let tid = Atomic<Int32>(0)

    @inline(never) func block() async {
        await Task.yield()
        tid.store(cly_live_current_tid(), ordering: .sequentiallyConsistent)
        entered.signal()
        release.wait()
    }
}

@inline(never)
func awaitTheBlockingActor(_ actor: BlockingActor) async -> Int {
    await actor.block()
    return capturesCounted.load(ordering: .relaxed)
}

/// The hang watchdog's capture of a thread blocked in an actor method carries the thread's async callers, and the
/// hang's event names the function that awaited the actor (issue 22 item 4).
@Suite struct AsyncHangCaptureTests {
    @Test func aThreadHungInAnActorMethodNamesTheFunctionThatAwaitedIt() async throws {
        // The unwinder loaded (as install does) and the live-capture handler installed (as the watchdog does).
        try #require(LiveStack.unavailableReason == nil)
        try #require(cly_live_install() == 0)
        let actor = BlockingActor()
        let task = Task.detached { await awaitTheBlockingActor(actor) }
        try await offThePool { actor.entered.wait() }
        let tid = actor.tid.load(ordering: .sequentiallyConsistent)
        let capture = HangCapture.take(subject: tid, waitMilliseconds: 1000)
        actor.release.signal()
        _ = await task.value
        let hung = try #require(capture?.threads.first)
        #expect(hung.tid == tid)
        #expect(hung.frames.first?.kind == .pc)
        let chain = try #require(hung.async, "no async chain for the hung thread")
        #expect(chain.anchor < hung.frames.count)
        let exception = NonFatalException(
            type: "Hang", value: "blocked", mechanism: .init(type: "hang", handled: true), threads: [hung],
            modules: LiveStack.modules())
        let symbolicator = ExceptionBuilder.makeSymbolicator(modules: exception.modules, options: .default)
        let event = exception.event(symbols: exception.symbolicate(with: symbolicator, options: .default))
        let frames =
            (event.properties["$exception_list"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue ?? [])
            .reversed().filter { $0["inline"] != true }
        let callers = frames.filter { $0[CapturedException.frameKindKey] == "async_resume" }
            .compactMap { $0["function"]?.stringValue }
        #expect(callers.first?.contains("awaitTheBlockingActor") == true, "\(callers)")
        let firstAsync = frames.firstIndex { $0[CapturedException.frameKindKey] == "async_resume" } ?? frames.count
        #expect(
            frames[..<firstAsync].contains { $0["function"]?.stringValue?.contains("block()") == true },
            "\(frames.compactMap { $0["function"]?.stringValue })")
    }
}
