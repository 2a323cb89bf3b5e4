import CohorlyCrash
import CrashDemoSupport
import Dispatch
import Foundation

/// Runs `body` (which crashes) on the named kind of thread; the main thread waits meanwhile.
func crash(on place: String, _ body: @escaping @Sendable () -> Void) -> Never {
    switch place {
    case "main":
        body()
    case "thread":
        let thread = Thread {
            CrashRecorder.prepareCurrentThread()
            demo_set_thread_name("demo-crasher")
            body()
        }
        thread.stackSize = 1 << 20
        thread.start()
    case "dispatch":
        DispatchQueue.global().async {
            CrashRecorder.prepareCurrentThread()
            body()
        }
    case "queue":
        // A serial queue of the app's own: its worker is named after libdispatch's root queue, the report after
        // this label.
        DispatchQueue(label: "demo.checkout-queue").async {
            CrashRecorder.prepareCurrentThread()
            body()
        }
    case "task":
        Task.detached {
            CrashRecorder.prepareCurrentThread()
            body()
        }
    default:
        usage("unknown place '\(place)' (main, thread, dispatch, queue or task)")
    }
    while true { sleep(60) }
}

/// Extra threads parked at a known depth, so reports show more than one thread.
enum Workers {
    /// Starts `count` named pthreads, each parked `depth` frames deep, plus one libdispatch worker and one
    /// Swift concurrency worker blocked in place; returns once all are in place.
    static func park(count: Int, depth: Int) {
        guard count > 0 else { return }
        let ready = DispatchSemaphore(value: 0)
        for index in 0..<count {
            let thread = Thread {
                // One thread gets a name with a control character and an invalid UTF-8 byte.
                if index == 0 {
                    let raw: [CChar] = [1, 98, 97, 100, -1, 110, 97, 109, 101, 0]  // "\u{1}bad\xFFname"
                    demo_set_thread_name(raw)
                } else {
                    demo_set_thread_name("parked-\(index)")
                }
                parkDeep(depth, ready)
            }
            thread.start()
        }
        DispatchQueue.global().async { parkDeep(depth, ready) }
        Task.detached { parkDeep(depth, ready) }
        for _ in 0..<(count + 2) { ready.wait() }
    }
}

@inline(never) func parkDeep(_ depth: Int, _ ready: DispatchSemaphore) {
    if depth > 1 {
        parkDeep(depth - 1, ready)
        demo_opaque(nil)
        return
    }
    ready.signal()
    while opaqueStop < 0 { sleep(60) }
}
