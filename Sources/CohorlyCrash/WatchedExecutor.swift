import CCrashRecorder
import Dispatch

extension CohorlyCrash {
    /// A serial executor the hang watchdog watches: a job (or a closure given to ``async(_:)``) that runs
    /// longer than ``Options/hangThreshold`` is a hang, and the thread running it is the one captured.
    ///
    /// Use it as an actor's executor:
    /// ```swift
    /// actor Database {
    ///     static let executor = CohorlyCrash.WatchedExecutor(name: "database")
    ///     nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }
    /// }
    /// ```
    /// Jobs run one at a time on ``queue``, a serial dispatch queue. Watching costs a clock read, a `gettid`
    /// and three atomic stores per job; an idle executor costs nothing. Watched while the watchdog runs and
    /// the executor is alive.
    public final class WatchedExecutor: SerialExecutor {
        /// The serial queue the jobs run on.
        public let queue: DispatchQueue
        let subject: HangSubject

        /// An executor named `name` (the event's subject) on a new serial queue of that label.
        public init(name: String, qos: DispatchQoS = .unspecified) {
            queue = DispatchQueue(label: name, qos: qos)
            subject = HangSubject(name: name, kind: .executor, tid: 0)
            HangRegistry.add(subject)
        }

        deinit { HangRegistry.remove(subject) }

        /// Runs `job` on ``queue``, watched.
        public func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { self.watched { job.runSynchronously(on: self.asUnownedSerialExecutor()) } }
        }

        /// This executor, for an actor's `unownedExecutor`.
        public func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

        /// Runs `work` on ``queue`` after the jobs enqueued before it, watched like a job.
        public func async(_ work: @escaping @Sendable () -> Void) {
            queue.async { self.watched(work) }
        }

        private func watched(_ body: () -> Void) {
            subject.tid.store(cly_live_current_tid(), ordering: .sequentiallyConsistent)
            subject.progressAndBusy()
            body()
            subject.progressAndIdle()
        }
    }
}
