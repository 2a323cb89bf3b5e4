import CCrashRecorder
import CrashDemoSupport
import Foundation

/// Scenario async-capture: the recorder's live captures inside async code, as handled errors and hangs use them.
///   - `self`: the calling task captures its own thread three awaits deep (`cly_capture_current_stack_async`,
///     what captureError does);
///   - `live`: a task blocked inside an actor method is captured from the main thread (`cly_live_capture`, what
///     the hang watchdog does).
/// Prints each capture as lines a test symbolicates: `capture NAME anchor A stop S`, then `frame NAME KIND PATH
/// OFFSET` per physical frame and `async NAME PATH OFFSET` per async caller (offsets within the module file's
/// mapping, as found by dladdr; KIND pc or return_address), then exits 0.
enum AsyncCaptures {
    static func run() -> Never {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            await captureOuter()
            done.signal()
        }
        done.wait()
        if cly_live_install() != 0 { usage("cannot install live capture") }
        let ready = DispatchSemaphore(value: 0)
        let stuck = StuckActor()
        Task.detached { await stuckHandler(stuck, ready) }
        ready.wait()
        var slots = [cly_live_thread](repeating: cly_live_thread(), count: 4)
        let count = slots.withUnsafeMutableBufferPointer { buffer in
            cly_live_capture(stuckTid, buffer.baseAddress, Int32(buffer.count), 1000, nil, nil)
        }
        if count <= 0 || slots[0].frame_count == 0 { usage("the live capture found no stack") }
        var subject = slots[0]
        let frames = withUnsafeBytes(of: &subject.frames) { Array($0.bindMemory(to: UInt.self)) }
        let chain = withUnsafeBytes(of: &subject.async.frames) { Array($0.bindMemory(to: UInt.self)) }
        printCapture(
            "live", frames: Array(frames.prefix(Int(subject.frame_count))), firstIsPC: subject.first_frame_kind == 0,
            chain: Array(chain.prefix(Int(subject.async.count))), anchor: subject.async.anchor,
            stop: subject.async.stop)
        exit(0)
    }
}

@inline(never) func captureInner() async -> Int {
    await Task.yield()
    var frames = [UInt](repeating: 0, count: Int(CLY_MAX_FRAMES))
    var chain = cly_async_chain()
    var truncated = false
    let count = frames.withUnsafeMutableBufferPointer { buffer in
        cly_capture_current_stack_async(buffer.baseAddress, Int32(buffer.count), 0, &truncated, &chain)
    }
    let addresses = withUnsafeBytes(of: &chain.frames) { Array($0.bindMemory(to: UInt.self)) }
    printCapture(
        "self", frames: Array(frames.prefix(Int(count))), firstIsPC: false,
        chain: Array(addresses.prefix(Int(chain.count))), anchor: chain.anchor, stop: chain.stop)
    return demo_identity(1)
}

@inline(never) func captureMiddle() async -> Int { await captureInner() + demo_identity(1) }

@inline(never) func captureOuter() async { _ = await captureMiddle() + demo_identity(1) }

/// Where a blocked actor method runs.
nonisolated(unsafe) var stuckTid: Int32 = 0

actor StuckActor {
    @inline(never) func blockForever(_ ready: DispatchSemaphore) async {
        await Task.yield()
        stuckTid = cly_live_current_tid()
        ready.signal()
        while opaqueStop < 0 { sleep(60) }  // a hang inside the actor method
    }
}

@inline(never) func stuckHandler(_ actor: StuckActor, _ ready: DispatchSemaphore) async {
    await actor.blockForever(ready)
    _ = demo_identity(1)
}

/// `frame`/`async` lines for one capture (see AsyncCaptures).
func printCapture(_ name: String, frames: [UInt], firstIsPC: Bool, chain: [UInt], anchor: Int32, stop: Int32) {
    say("capture \(name) anchor \(anchor) stop \(String(cString: cly_async_stop_name(stop)))")
    for (index, address) in frames.enumerated() {
        say("frame \(name) \(index == 0 && firstIsPC ? "pc" : "return_address") \(location(address))")
    }
    for address in chain { say("async \(name) \(location(address))") }
}

/// "PATH 0xOFFSET" of an address in a loaded object (dladdr).
func location(_ address: UInt) -> String {
    var offset: UInt = 0
    guard let path = demo_address_location(address, &offset) else { return "? 0x0" }
    return "\(String(cString: path)) 0x\(String(offset, radix: 16))"
}
