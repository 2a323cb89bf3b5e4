import CCrashRecorder
import CrashDemoSupport
import Foundation

// Crashes whose awaiting chain runs through the concurrency runtime's own functions, as a server's does: a
// route awaits a middleware, which awaits a service through a runtime construct (a task-local value, as
// `withSpan`, `ServiceContext.withValue` and swift-log's task-local logger do; a cancellation handler; a task
// group; a continuation resumed from another thread; `async let`), which awaits a store that crashes after a
// `Task.sleep`, so the physical stack starts at the executor. Several of the runtime's resume funclets have no
// unwind info (cly_resume_points.c). AsyncStackTests lists each chain, innermost caller first.

/// The runtime constructs the chains run through.
enum AsyncRuntimeCrash {
    /// Waits until the recorder has read the symbols of the resume funclets without unwind info (a scan that
    /// starts at install, on a thread of its own), then starts the crash `kind` on a task and blocks.
    static func run(_ kind: CrashKind) -> Never {
        if !cly_test_wait_resume_points(10_000) { usage("the resume-point scan did not finish") }
        Task.detached {
            switch kind {
            case .asyncTaskLocal: print(try await localRoute())
            case .asyncCancellationHandler: print(try await cancelRoute())
            case .asyncGroupChild: print(try await groupRoute())
            case .asyncContinuation: print(try await continuationRoute())
            case .asyncLet: print(try await letRoute())
            default: break
            }
        }
        while true { sleep(60) }
    }
}

extension AsyncRuntimeCrash {
    /// Scenario resume-points: once the scan is done, prints `point PATH 0xOFFSET` for every resume funclet
    /// without unwind info the async walk recognises (offsets within the module file's mapping, by dladdr), then
    /// exits 0.
    static func printResumePoints() -> Never {
        if !cly_test_wait_resume_points(10_000) { usage("the resume-point scan did not finish") }
        var points = [UInt](repeating: 0, count: Int(CLY_MAX_RESUME_POINTS))
        let count = points.withUnsafeMutableBufferPointer {
            Int(cly_test_resume_points_list($0.baseAddress, Int32($0.count)))
        }
        for point in points.prefix(count) { print("point \(location(point))") }
        exit(0)
    }
}

/// A task-local request id, as a tracing span or a request logger keeps one.
enum RequestTaskLocal {
    @TaskLocal static var requestID = ""
}

@inline(never) func localStore(_ key: String) async throws -> Int {
    try await Task.sleep(for: .milliseconds(1))
    lastCrashFunction = "localStore"
    return opaqueOptional! + key.count
}

@inline(never) func localService(_ key: String) async throws -> Int { try await localStore(key) + demo_identity(1) }

@inline(never) func localMiddleware(_ key: String) async throws -> Int {
    try await RequestTaskLocal.$requestID.withValue("request-\(key)") { try await localService(key) } + demo_identity(1)
}

@inline(never) func localRoute() async throws -> Int { try await localMiddleware("quote") + demo_identity(1) }

@inline(never) func cancelStore(_ key: String) async throws -> Int {
    try await Task.sleep(for: .milliseconds(1))
    lastCrashFunction = "cancelStore"
    return opaqueOptional! + key.count
}

@inline(never) func cancelService(_ key: String) async throws -> Int { try await cancelStore(key) + demo_identity(1) }

@inline(never) func cancelMiddleware(_ key: String) async throws -> Int {
    try await withTaskCancellationHandler {
        try await cancelService(key)
    } onCancel: {
        print("cancelled")
    } + demo_identity(1)
}

@inline(never) func cancelRoute() async throws -> Int { try await cancelMiddleware("quote") + demo_identity(1) }

@inline(never) func groupStore(_ index: Int) async throws -> Int {
    try await Task.sleep(for: .milliseconds(1))
    lastCrashFunction = "groupStore"
    if index == demo_identity(2) { return opaqueOptional! }
    return index
}

@inline(never) func groupService(_ index: Int) async throws -> Int { try await groupStore(index) + demo_identity(1) }

@inline(never) func groupMiddleware() async throws -> Int {
    try await withThrowingTaskGroup(of: Int.self) { group in
        for index in 0..<3 { group.addTask { try await groupService(index) } }
        return try await group.reduce(0, +)
    } + demo_identity(1)
}

@inline(never) func groupRoute() async throws -> Int { try await groupMiddleware() + demo_identity(1) }

/// A callback API finishing on a thread of its own, bridged with a checked continuation.
@inline(never) func continuationStore(_ key: String) async throws -> Int {
    let value = await withCheckedContinuation { (continuation: CheckedContinuation<Int, Never>) in
        Thread.detachNewThread { continuation.resume(returning: demo_identity(key.count)) }
    }
    try await Task.sleep(for: .milliseconds(1))
    lastCrashFunction = "continuationStore"
    return opaqueOptional! + value
}

@inline(never) func continuationService(_ key: String) async throws -> Int {
    try await continuationStore(key) + demo_identity(1)
}

@inline(never) func continuationRoute() async throws -> Int {
    try await continuationService("quote") + demo_identity(1)
}

@inline(never) func letStore(_ key: String) async throws -> Int {
    try await Task.sleep(for: .milliseconds(1))
    lastCrashFunction = "letStore"
    return opaqueOptional! + key.count
}

@inline(never) func letService(_ key: String) async throws -> Int { try await letStore(key) + demo_identity(1) }

@inline(never) func letMiddleware(_ key: String) async throws -> Int {
    async let price = letService(key)
    return try await price + demo_identity(1)
}

@inline(never) func letRoute() async throws -> Int { try await letMiddleware("quote") + demo_identity(1) }
