import Foundation

// Waits for the test targets that do not hold a thread of the cooperative pool.
//
// swift-testing runs every test, synchronous or async, as a job of the test process's cooperative pool, which has
// one thread per core (two on the CI machine). A test that blocks a pool thread while it waits for a process, a
// pipe or a condition takes that thread from every other test: async code under test (a retry loop's backoff, a
// flush's answer) resumes only when a thread comes free. These waits suspend instead, or block a thread of their
// own.

/// Waits for `condition`, checking every 2 ms, suspended in between; false when it still does not hold after
/// `timeout` seconds (a safety net, not a timing assertion).
public func eventually(timeout: Double = 20, _ condition: () throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
    while ContinuousClock.now < deadline && !Task.isCancelled {
        if try condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return try condition()
}

/// Runs `body`, which blocks (a pipe read, a wait for a process), on a thread of its own, so no pool thread waits
/// with it; returns what it returns.
public func offThePool<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Swift.Result { try body() }) }
        thread.name = "test.blocking-wait"
        thread.start()
    }
}

/// Starts `process` and waits for it to end, suspended (its termination handler resumes the wait).
public func runToEnd(_ process: Process) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        process.terminationHandler = { _ in continuation.resume() }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
}

/// Waits for the running `process` to end, suspended.
public func waitForExit(_ process: Process) async {
    _ = try? await offThePool { process.waitUntilExit() }
}

/// Starts `process`, reads `output` (a pipe it writes to) to its end and waits for the process to end, off the
/// cooperative pool; returns what it read.
public func runReadingToEnd(_ process: Process, reading output: Pipe) async throws -> Data {
    try await offThePool {
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }
}
