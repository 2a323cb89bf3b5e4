import Foundation

/// A mutex with a condition variable (pthread), for state shared with the client's background threads.
package final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes every waiter. Call with or without the lock held.
    package func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits (lock held) until signalled or until the monotonic `deadline` (seconds) passes.
    package func wait(until deadline: Double?) {
        guard let deadline else {
            pthread_cond_wait(condition, mutex)
            return
        }
        let clamped = min(deadline, Monotonic.now() + 86_400)
        var spec = timespec()
        spec.tv_sec = Int(clamped)
        spec.tv_nsec = Int((clamped - Double(spec.tv_sec)) * 1e9)
        pthread_cond_timedwait(condition, mutex, &spec)
    }
}

/// Monotonic clock readings in seconds.
package enum Monotonic {
    package static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

/// What a flush request reports when it ends: true once everything it covered was delivered (or dropped as the
/// retry contract says), false when an attempt failed or the client stopped. Called on the client's threads.
typealias FlushCompletion = @Sendable (Bool) -> Void

/// One flush's answer, awaited by a thread with a deadline (``Cohorly/flush(waitingAtMost:)``).
final class FlushAnswer: @unchecked Sendable {
    private let lock = ConditionLock()
    private var value: Bool?  // guarded by `lock`

    func set(_ delivered: Bool) {
        lock.withLock { value = delivered }
        lock.broadcast()
    }

    /// The answer, or nil when the monotonic `deadline` (seconds) passed first.
    func wait(until deadline: Double) -> Bool? {
        lock.withLock {
            while value == nil && Monotonic.now() < deadline { lock.wait(until: deadline) }
            return value
        }
    }
}
