import Foundation

/// A mutex with a condition variable (pthread), for state shared with the client's background threads.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
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

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Wakes every waiter. Call with or without the lock held.
    func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits (lock held) until signalled or until the monotonic `deadline` (seconds) passes.
    func wait(until deadline: Double?) {
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
enum Monotonic {
    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
