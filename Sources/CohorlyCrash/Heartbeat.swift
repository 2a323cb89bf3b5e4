import CCrashRecorder

extension CohorlyCrash {
    /// The heartbeat of a thread that runs its own loop (a server's event loop, a worker): the hang watchdog
    /// reports a hang when the thread stays busy without a ``beat()`` for longer than
    /// ``Options/hangThreshold``.
    ///
    /// Create it on the thread it watches (that thread's stack is the one captured), ``beat()`` once per loop
    /// iteration, and ``pause()`` before waiting for work, so that an idle wait is not a hang:
    /// ```swift
    /// let heartbeat = CohorlyCrash.Heartbeat(name: "ingest loop")
    /// while running {
    ///     heartbeat.pause()
    ///     let job = queue.next()  // may wait for a long time: not watched
    ///     heartbeat.beat()
    ///     job.run()  // watched: a job running longer than the threshold is a hang
    /// }
    /// heartbeat.stop()
    /// ```
    /// A heartbeat costs two atomic stores per beat. It is watched only while the watchdog runs (a
    /// `hangThreshold` was given to ``install(cohorly:release:dist:version:options:)``); it stops being watched
    /// with ``stop()`` or when it is released.
    public final class Heartbeat: Sendable {
        let subject: HangSubject

        /// Registers the calling thread under `name` (the event's subject), busy from now on.
        public init(name: String) {
            subject = HangSubject(name: name, kind: .thread, tid: cly_live_current_tid())
            subject.progressAndBusy()
            HangRegistry.add(subject)
        }

        deinit { HangRegistry.remove(subject) }

        /// The thread made progress; it is watched from now on (again, after ``pause()``).
        public func beat() { subject.progressAndBusy() }

        /// The thread is about to wait for work: not watched until the next ``beat()``.
        public func pause() { subject.progressAndIdle() }

        /// Stops watching this thread.
        public func stop() {
            subject.progressAndIdle()
            HangRegistry.remove(subject)
        }
    }
}
