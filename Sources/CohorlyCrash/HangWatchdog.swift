import CCrashRecorder
import Cohorly
import Dispatch
import Foundation
import Synchronization

/// The hang watchdog: a thread that checks, every quarter of the threshold (at most every 500 ms), whether the
/// main thread, a ``CohorlyCrash/Heartbeat`` or a ``CohorlyCrash/WatchedExecutor`` stayed busy without progress
/// for longer than the threshold.
///
/// On a hang it captures the hung thread's stack and the others' without stopping them (``HangCapture``),
/// writes the launch's ``HangReportFile`` (for a process that dies hung), and — once per hang — hands a
/// ``Hang`` to its sink: when the hang ends, with the whole blocked duration, or after
/// ``Configuration/ongoingReportAfter`` if it is still going on then.
///
/// The main thread is watched through the main dispatch queue (where main-actor work runs): the watchdog posts
/// a ping there and the main queue is busy from the post until the ping runs. It is watched only after it
/// answered a first ping, so an app whose main thread never services the main queue (a plain blocking loop) is
/// not reported: such a loop beats a ``CohorlyCrash/Heartbeat`` instead. On Linux, `dispatchMain()` (and an
/// `async` main) parks the main thread and lets libdispatch workers drain the main queue: the thread captured
/// as the hung one is the one that answered the last ping, corrected at the hang's end to the one that
/// answers the next (the blocked drain runs it right after the item that blocked it).
final class HangWatchdog: Sendable {
    struct Configuration: Sendable {
        /// Busy without progress for longer than this is a hang.
        var threshold: Duration
        /// A hang still going on after this long is reported then (with `ongoing`), not at its end.
        var ongoingReportAfter: Duration = .seconds(30)
        /// How long a capture waits for the threads' answers.
        var captureWaitMilliseconds = UInt32(CLY_THREAD_WAIT_MS)
        /// Where the died-while-hung file goes (the recorder's report directory).
        var reportDirectory: URL
        /// Whether the main thread is watched (through the main queue).
        var watchMainThread = true

        /// The interval between checks: a quarter of the threshold, between 1 ms and 500 ms.
        var tick: Duration { min(max(threshold / 4, .milliseconds(1)), .milliseconds(500)) }
    }

    /// One hang, as handed to the sink.
    struct Hang: Sendable {
        var subject: String
        var kind: HangSubject.Kind
        var tid: Int32
        /// How long the subject was blocked (to the hang's end, or so far when `ongoing`).
        var duration: Duration
        /// Reported before it ended (it lasted ``Configuration/ongoingReportAfter``).
        var ongoing: Bool
        /// The stacks at detection (nil when live capture was unavailable).
        var capture: HangCapture?
        /// Unix milliseconds of the detection.
        var detectedAtMs: UInt64
        var threshold: Duration
    }

    typealias Sink = @Sendable (Hang) -> Void

    let configuration: Configuration
    private let sink: Sink
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    let main = HangSubject(name: "main thread", kind: .mainThread, tid: getpid())
    private let mainArmed = Atomic<Bool>(false)
    private let mainPingOutstanding = Atomic<Bool>(false)
    private let sinkQueue = DispatchQueue(label: "cohorly.hangs.events")

    private static let running = Mutex<HangWatchdog?>(nil)

    private init(configuration: Configuration, sink: @escaping Sink) {
        self.configuration = configuration
        self.sink = sink
    }

    /// Starts the watchdog (stopping one already running). Live capture's signal handler is installed first;
    /// without it the hangs are still reported, without stacks.
    @discardableResult
    static func start(_ configuration: Configuration, sink: @escaping Sink) -> HangWatchdog {
        stop()
        _ = cly_live_install()
        let watchdog = HangWatchdog(configuration: configuration, sink: sink)
        running.withLock { $0 = watchdog }
        let thread = Thread {
            ThreadName.setCurrent("cohorly-hangs")
            watchdog.run()
        }
        thread.name = "cohorly-hangs"
        thread.start()
        return watchdog
    }

    /// Stops the running watchdog, if any, and waits for its thread to end (its hang file is removed).
    static func stop() {
        guard
            let watchdog = running.withLock({ current in
                defer { current = nil }; return current
            })
        else { return }
        watchdog.stopped.signal()
        watchdog.finished.wait()
    }

    /// The running watchdog.
    static var current: HangWatchdog? { running.withLock { $0 } }

    // MARK: - The watchdog thread

    /// A hang being followed.
    private struct Episode {
        let subject: HangSubject
        let busySince: UInt64
        let detectedAtMs: UInt64
        let capture: HangCapture?
        var reported = false
    }

    private func run() {
        cly_live_name_current_thread("cohorly-hangs")  // as /proc/self/task/<tid>/comm shows it
        CrashRecorder.prepareCurrentThread()
        let tick = configuration.tick
        let threshold = Self.nanoseconds(configuration.threshold)
        let ongoingAfter = Self.nanoseconds(configuration.ongoingReportAfter)
        var episodes: [ObjectIdentifier: Episode] = [:]
        var file: (owner: ObjectIdentifier, file: HangReportFile)?
        defer {
            file?.file.remove()
            finished.signal()
        }
        while stopped.wait(timeout: .now() + Self.dispatchInterval(tick)) == .timedOut {
            let now = HangClock.now()
            if configuration.watchMainThread { pingMain(now: now) }
            var subjects = HangRegistry.all
            if configuration.watchMainThread { subjects.append(main) }
            // Hangs that ended, or went on long enough to be reported now (sent once the hang file is updated,
            // so a process that exits on the report does not leave the file of a hang that ended).
            var reports: [Hang] = []
            for (id, episode) in episodes {
                let busySince = episode.subject.busySince.load(ordering: .sequentiallyConsistent)
                if busySince != episode.busySince {
                    let end = episode.subject.lastProgress.load(ordering: .sequentiallyConsistent)
                    let blocked = (end > episode.busySince ? end : now) - episode.busySince
                    if !episode.reported { reports.append(hang(episode, blocked: blocked, ongoing: false)) }
                    episodes[id] = nil
                } else if !episode.reported && now - episode.busySince >= ongoingAfter {
                    reports.append(hang(episode, blocked: now - episode.busySince, ongoing: true))
                    episodes[id]?.reported = true
                }
            }
            // New hangs.
            for subject in subjects where episodes[ObjectIdentifier(subject)] == nil {
                let busySince = subject.busySince.load(ordering: .sequentiallyConsistent)
                guard busySince != 0, now > busySince, now - busySince > threshold else { continue }
                let tid = subject.tid.load(ordering: .sequentiallyConsistent)
                let capture = HangCapture.take(subject: tid, waitMilliseconds: configuration.captureWaitMilliseconds)
                // Progress during the capture: not a hang after all (and the stack would not be the hung one).
                guard subject.busySince.load(ordering: .sequentiallyConsistent) == busySince else { continue }
                episodes[ObjectIdentifier(subject)] = Episode(
                    subject: subject, busySince: busySince, detectedAtMs: Self.wallClockMilliseconds(),
                    capture: capture)
            }
            // The hang file holds the oldest hang going on (one per launch).
            let oldest = episodes.min { $0.value.busySince < $1.value.busySince }
            if file?.owner != oldest?.key {
                file?.file.remove()
                file = oldest.flatMap { id, episode in
                    writeFile(episode, blocked: HangClock.now() - episode.busySince).map { (id, $0) }
                }
                Self.fileAtExit.withLock { $0 = file?.file }
            } else {
                file?.file.touch()
            }
            for hang in reports { sinkQueue.async { [sink] in sink(hang) } }
        }
    }

    /// The hang file of this process, removed by `exit`: a process that exits while a thread is hung did not
    /// die hung.
    private static let fileAtExit: Mutex<HangReportFile?> = {
        atexit { HangWatchdog.fileAtExit.withLock { $0?.remove() } }
        return Mutex(nil)
    }()

    /// Posts a ping to the main queue unless one is outstanding. The main thread counts as busy from the post
    /// until the ping runs, once it answered a first ping.
    private func pingMain(now: UInt64) {
        guard !mainPingOutstanding.exchange(true, ordering: .sequentiallyConsistent) else { return }
        if mainArmed.load(ordering: .sequentiallyConsistent) {
            main.busySince.store(now, ordering: .sequentiallyConsistent)
        }
        DispatchQueue.main.async { [self] in
            main.tid.store(cly_live_current_tid(), ordering: .sequentiallyConsistent)
            main.progressAndIdle()
            mainArmed.store(true, ordering: .sequentiallyConsistent)
            mainPingOutstanding.store(false, ordering: .sequentiallyConsistent)
        }
    }

    private func hang(_ episode: Episode, blocked: UInt64, ongoing: Bool) -> Hang {
        var capture = episode.capture
        // The main queue may be drained by any libdispatch worker (dispatchMain, async main): at detection the
        // thread that answered the last ping is taken as the hung one. Once the hang is over the thread that
        // answers the next ping is known for sure: the drain that was blocked runs the ping right after.
        if !ongoing && episode.subject.kind == .mainThread {
            capture = capture?.withSubject(episode.subject.tid.load(ordering: .sequentiallyConsistent))
        }
        return Hang(
            subject: episode.subject.name, kind: episode.subject.kind,
            tid: capture?.threads.first?.tid ?? episode.subject.tid.load(ordering: .sequentiallyConsistent),
            duration: .nanoseconds(Int64(clamping: blocked)), ongoing: ongoing, capture: capture,
            detectedAtMs: episode.detectedAtMs, threshold: configuration.threshold)
    }

    private func writeFile(_ episode: Episode, blocked: UInt64) -> HangReportFile? {
        let report = CrashReport.hang(
            subject: episode.subject, capture: episode.capture, blockedMs: blocked / 1_000_000,
            thresholdMs: Self.nanoseconds(configuration.threshold) / 1_000_000)
        return HangReportFile(directory: configuration.reportDirectory, report: report)
    }

    // MARK: - Time

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000).partialValue
            &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        .nanoseconds(Int(clamping: nanoseconds(duration)))
    }

    static func wallClockMilliseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return UInt64(max(0, time.tv_sec)) * 1000 + UInt64(max(0, time.tv_nsec)) / 1_000_000
    }
}
