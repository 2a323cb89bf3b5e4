import CCrashRecorder
import Dispatch
import Synchronization
import CohorlyLaunch

#if canImport(Glibc)
    import Glibc
#endif

/// This launch's marker: a file in the report directory that says "this launch is running" until it ends
/// normally (the recorder's atexit hook removes it) or in a crash the recorder reported (the crash handler
/// removes it, cly_launch_marker.c). A marker left behind is an abnormal exit (``AbnormalExits``), unless the
/// termination monitor (cly_termination.c) recorded in it that SIGTERM, SIGINT, SIGHUP… ended the launch.
///
/// The marker is kept up to date cheaply: the crash-time context is written into it whenever the app changes
/// it (``CrashRecorder/updateContext(_:)``: identity, super properties, flags; one `pwrite`), and the resident
/// memory is sampled every ``AbnormalExitOptions/memorySampleInterval`` (default 10 s) by a dispatch timer
/// (one read of `/proc/self/statm` and one `pwrite` of at most 256 bytes).
///
/// While the launch runs it holds an exclusive `flock` on the marker through a close-on-exec descriptor: a
/// later launch that can take the lock knows this one has died, or exec'd (see ``AbnormalExits``).
final class LaunchMarker: Sendable {
    /// The marker of this process, once made.
    private static let active = Mutex<LaunchMarker?>(nil)

    private struct State {
        var descriptor: Int32
        var generation: UInt64 = 0
        var peakResidentBytes: UInt64 = 0
        var optedOut = false
    }

    let name: String
    let ownerPid: Int32
    private let state: Mutex<State>
    /// The memory sampler (dispatch sources are thread-safe; only scheduled, resumed and cancelled here).
    nonisolated(unsafe) private let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))

    private init(name: String, descriptor: Int32) {
        self.name = name
        ownerPid = getpid()
        state = Mutex(State(descriptor: descriptor))
    }

    /// Makes this launch's marker in `directory` (the report directory, already private) and starts the memory
    /// timer. Returns nil when the marker cannot be made (abnormal exits of this launch then go unreported;
    /// nothing else changes). A second call returns the marker made first.
    @discardableResult
    static func start(directory: String, sampleInterval: Duration) -> LaunchMarker? {
        if let existing = active.withLock({ $0 }), existing.ownerPid == getpid() { return existing }
        guard let folder = ReportDirectory(path: directory) else { return nil }
        var buffer = [CChar](repeating: 0, count: 37)
        cly_current_insert_id(&buffer)
        let insertId = String(decoding: buffer.prefix(36).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let pid = getpid()
        let record = LaunchRecord(
            insertId: insertId, pid: pid, startTicks: ProcessFacts.startTicks(of: pid) ?? 0,
            bootId: ProcessFacts.bootId(), executable: ProcessFacts.executable(),
            startedMs: ProcessFacts.nowMilliseconds(), oomCounters: CgroupMemory.counters())
        let name = LaunchRecord.fileName(insertId: insertId)
        // Made under a temporary name, locked and filled, then renamed: a marker that has its name is always
        // locked by its (living) launch, never mistaken for a dead one's.
        let staging = LaunchRecord.namePrefix + insertId + ".new"
        let fd = openat(
            folder.descriptor, staging, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        fchmod(fd, 0o600)
        let launch = LaunchRecord.padded(Array(record.launchJSON.utf8), to: LaunchRecord.launchBytes)
        // The termination monitor writes its record in place: the region exists before the file gets its name.
        let ending = LaunchRecord.padded([], to: LaunchRecord.endingBytes)
        guard HeldFile.claim(fd), launch.count <= LaunchRecord.launchBytes,
            write(fd, launch, at: LaunchRecord.launchOffset), write(fd, ending, at: LaunchRecord.endingOffset),
            cly_launch_marker_set(directory + "/" + name) == 0
        else {
            unlinkat(folder.descriptor, staging, 0)
            close(fd)
            return nil
        }
        // A SIGTERM (SIGINT, SIGHUP…) that ends the launch is recorded in the marker from the moment it has a name.
        cly_termination_install()
        guard renameat(folder.descriptor, staging, folder.descriptor, name) == 0 else {
            cly_launch_marker_clear()
            unlinkat(folder.descriptor, staging, 0)
            close(fd)
            return nil
        }
        let marker = LaunchMarker(name: name, descriptor: fd)
        marker.sampleMemory()
        // The context as it is now, then every change (CrashRecorder.publish), with no change missed between.
        CrashRecorder.withSerializedContext { json in
            marker.writeContext(json)
            active.withLock { $0 = marker }
        }
        marker.startTimer(sampleInterval)
        return marker
    }

    /// Writes a new crash-time context into the active marker (called by CrashRecorder on every change).
    static func contextChanged(_ json: String) {
        active.withLock { $0 }?.writeContext(json)
    }

    /// Ends this launch's marker before an exec (``CohorlyCrash/prepareForExec()``): removes the file and stops
    /// the timer.
    static func endForExec() {
        guard let marker = active.withLock({ $0 }), marker.ownerPid == getpid() else { return }
        cly_launch_marker_clear()
        marker.timer.cancel()
    }

    /// Records whether the user is opted out (an opted-out launch's abnormal exit is not reported).
    static func optedOutChanged(_ optedOut: Bool) {
        guard let marker = active.withLock({ $0 }) else { return }
        marker.state.withLock { $0.optedOut = optedOut }
        marker.sampleMemory()
    }

    /// The name of this process's marker, if it made one.
    static var currentName: String? {
        active.withLock { $0 }.flatMap { $0.ownerPid == getpid() ? $0.name : nil }
    }

    private func writeContext(_ json: String) {
        guard getpid() == ownerPid else { return }  // a forked child must not rewrite its parent's marker
        let bytes = Array(json.utf8)
        guard bytes.count <= Int(CLY_MAX_CONTEXT) else { return }
        state.withLock { state in
            state.generation += 1
            let slot = LaunchRecord.slot(generation: state.generation, context: bytes)
            let offset = LaunchRecord.slotOffsets[Int(state.generation % 2)]
            _ = Self.write(state.descriptor, slot, at: offset)
        }
    }

    /// Records the resident memory now (and the largest seen), with the opt-out state.
    func sampleMemory() {
        guard getpid() == ownerPid, let resident = ProcessFacts.residentBytes() else { return }
        let now = ProcessFacts.nowMilliseconds()
        state.withLock { state in
            state.peakResidentBytes = max(state.peakResidentBytes, resident)
            let sample = LaunchRecord.MemorySample(
                residentBytes: resident, peakResidentBytes: state.peakResidentBytes, sampledMs: now)
            let json = LaunchRecord.memoryJSON(sample, optedOut: state.optedOut)
            let bytes = LaunchRecord.padded(Array(json.utf8), to: LaunchRecord.memoryBytes)
            _ = Self.write(state.descriptor, bytes, at: LaunchRecord.memoryOffset)
        }
    }

    private func startTimer(_ interval: Duration) {
        let nanoseconds = max(
            interval.components.seconds.multipliedReportingOverflow(by: 1_000_000_000).partialValue
                + interval.components.attoseconds / 1_000_000_000, 1_000_000)
        // A generous leeway lets the kernel batch the wake-up with others (the sample is not time-critical).
        timer.schedule(
            deadline: .now() + .nanoseconds(Int(nanoseconds)), repeating: .nanoseconds(Int(nanoseconds)),
            leeway: .nanoseconds(Int(nanoseconds / 10)))
        timer.setEventHandler { [weak self] in self?.sampleMemory() }
        timer.resume()
    }

    private static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int) -> Bool {
        bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) } == bytes.count
    }
}
