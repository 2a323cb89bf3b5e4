import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Monotonic nanoseconds (CLOCK_MONOTONIC), the clock every hang time is measured on.
enum HangClock {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

/// Something the hang watchdog watches: the main thread, a thread beating a ``CohorlyCrash/Heartbeat``, or a
/// ``CohorlyCrash/WatchedExecutor``. It is busy from ``busySince`` until it makes progress; it is hung when it
/// stays busy longer than the threshold. Written by the watched code (two atomic stores per progress), read by
/// the watchdog thread.
final class HangSubject: Sendable {
    /// What kind of thing is watched (the event says it).
    enum Kind: String, Sendable {
        case mainThread = "main_thread"
        case thread
        case executor
    }

    /// `main thread`, or the name the app gave.
    let name: String
    let kind: Kind
    /// The kernel thread id of the thread doing the work (the one to capture as the hung thread).
    let tid: Atomic<Int32>
    /// Monotonic ns since which it is busy without progress; 0 while idle (not watched).
    let busySince = Atomic<UInt64>(0)
    /// Monotonic ns of its last progress (a beat, the end of a job, an answered ping).
    let lastProgress = Atomic<UInt64>(0)

    init(name: String, kind: Kind, tid: Int32) {
        self.name = name
        self.kind = kind
        self.tid = Atomic(tid)
    }

    /// Progress now, and busy from now on.
    func progressAndBusy(now: UInt64 = HangClock.now()) {
        lastProgress.store(now, ordering: .sequentiallyConsistent)
        busySince.store(now, ordering: .sequentiallyConsistent)
    }

    /// Progress now, then idle (not watched until busy again).
    func progressAndIdle(now: UInt64 = HangClock.now()) {
        lastProgress.store(now, ordering: .sequentiallyConsistent)
        busySince.store(0, ordering: .sequentiallyConsistent)
    }
}

/// The subjects registered by the app (heartbeats and executors); the watchdog reads them at every check.
enum HangRegistry {
    private static let subjects = Mutex<[ObjectIdentifier: HangSubject]>([:])

    static func add(_ subject: HangSubject) {
        subjects.withLock { $0[ObjectIdentifier(subject)] = subject }
    }

    static func remove(_ subject: HangSubject) {
        _ = subjects.withLock { $0.removeValue(forKey: ObjectIdentifier(subject)) }
    }

    static var all: [HangSubject] { subjects.withLock { Array($0.values) } }
}
