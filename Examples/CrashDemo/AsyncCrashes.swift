import CCrashRecorder
import CrashDemoSupport
import Foundation

// Crashes inside async code, where the functions that awaited the crashing one are not on the physical stack
// (only in the task's chain of async contexts): the recorder's async walk is what names them. Every function
// here is @inline(never) and does work after its await, so each is an awaiting function of its own in every
// build (AsyncStackTests lists them in the order the report must show: innermost caller first).

/// The async crash kinds.
enum AsyncCrash {
    /// Starts the async crash `kind` on a task and blocks the calling thread (the crash ends the process).
    static func run(_ kind: CrashKind) -> Never {
        switch kind {
        case .asyncActor: startCheckoutTask()
        case .asyncSleep: startSleepTask()
        case .asyncTaskGroup: startGroupTask()
        default: break
        }
        while true { sleep(60) }
    }
}

/// The recorder's async-walk test hooks chosen on the command line (`--corrupt-async`, `--no-async-walk`,
/// `--async-read-pipe`).
func applyAsyncHooks(_ options: DemoOptions) {
    switch options.corruptAsync {
    case nil: break
    case "fault": cly_test_corrupt_async_walk(Int32(CLY_ASYNC_STOP_FAULT.rawValue))
    case "validation": cly_test_corrupt_async_walk(Int32(CLY_ASYNC_STOP_VALIDATION.rawValue))
    case "loop": cly_test_corrupt_async_walk(Int32(CLY_ASYNC_STOP_LOOP.rawValue))
    case let mode?: usage("unknown --corrupt-async mode '\(mode)' (fault, validation or loop)")
    }
    if !options.asyncWalk { cly_test_set_async_walk(false) }
    if options.asyncReadPipe && cly_test_async_use_pipe() != 0 { usage("cannot open the async walk's pipe") }
}

/// An actor whose method force-unwraps nil (SIGILL), awaited across an actor hop.
actor PricingEngine {
    var discounts: [String: Int] = ["WELCOME": 10]

    @inline(never) func discountPercent(for code: String) async -> Int {
        lastCrashFunction = "discountPercent"
        let percent = discounts[code + String(demo_identity(0))]!  // no such coupon
        return percent + demo_identity(0)
    }
}

struct OrderService {
    let engine = PricingEngine()

    @inline(never) func price(cents: Int, couponCode: String) async -> Int {
        let discount = await engine.discountPercent(for: couponCode)
        return cents - cents * discount / 100 + demo_identity(0)
    }
}

@inline(never) func checkout(cart: [Int], coupon: String) async -> Int {
    let total = await OrderService().price(cents: cart.reduce(0, +), couponCode: coupon)
    return total + demo_identity(0)
}

@inline(never) func handleRequest(path: String) async -> Int {
    let total = await checkout(cart: [1200, 300, demo_identity(50)], coupon: path)
    return total + demo_identity(1)
}

@inline(never) func startCheckoutTask() {
    Task.detached {
        let status = await handleRequest(path: "NOPE")
        print(status)
    }
}

@inline(never) func sleepLevel3() async throws -> Int {
    try await Task.sleep(for: .milliseconds(1))
    lastCrashFunction = "sleepLevel3"
    return opaqueOptional!  // after the resume: the physical stack holds only this funclet and the executor
}

@inline(never) func sleepLevel2() async throws -> Int { try await sleepLevel3() + demo_identity(1) }

@inline(never) func sleepLevel1() async throws -> Int { try await sleepLevel2() + demo_identity(1) }

@inline(never) func startSleepTask() {
    Task.detached {
        let value = try await sleepLevel1()
        print(value)
    }
}

@inline(never) func groupChild(_ index: Int) async -> Int {
    await Task.yield()
    lastCrashFunction = "groupChild"
    if index == demo_identity(2) { return opaqueOptional! }
    return index
}

@inline(never) func startGroupTask() {
    Task.detached {
        let sum = await withTaskGroup(of: Int.self) { group in
            for index in 0..<3 { group.addTask { await groupChild(index) } }
            return await group.reduce(0, +)
        }
        print(sum)
    }
}

/// A task blocked inside an async function, two awaits deep (scenario handler-unwinds: a thread whose async
/// callers every capture walks).
enum AsyncParking {
    /// Starts the task; returns once it is blocked in place.
    static func park() {
        let ready = DispatchSemaphore(value: 0)
        Task.detached { await parkedOuter(ready) }
        ready.wait()
    }
}

@inline(never) func parkedInner(_ ready: DispatchSemaphore) async -> Int {
    await Task.yield()
    ready.signal()
    while opaqueStop < 0 { sleep(60) }  // blocks its pool thread inside async code
    return demo_identity(1)
}

@inline(never) func parkedOuter(_ ready: DispatchSemaphore) async { _ = await parkedInner(ready) + demo_identity(1) }

extension AsyncParking {
    /// Scenario async-idle: tasks run on the cooperative pool and end, so its threads sit idle (their registers
    /// may still hold contexts of the finished tasks); then the main thread crashes. No idle thread may get
    /// async callers.
    static func runToEndThenCrash() -> Never {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let sum = await withTaskGroup(of: Int.self) { group in
                for index in 0..<8 { group.addTask { await finishedWork(index) } }
                return await group.reduce(0, +)
            }
            print("finished \(sum)")
            done.signal()
        }
        done.wait()
        demo_null_write()
        exit(97)
    }
}

@inline(never) func finishedWork(_ index: Int) async -> Int {
    try? await Task.sleep(for: .milliseconds(1))
    return index + demo_identity(0)
}
