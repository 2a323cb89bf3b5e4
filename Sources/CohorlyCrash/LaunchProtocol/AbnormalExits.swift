import Cohorly
import CohorlyLaunch

#if canImport(Glibc)
    import Glibc
#endif

/// What a launch makes of the markers earlier launches left in the report directory (``LaunchMarker``).
///
/// For each marker that is not this launch's, in order:
/// 1. Its lock is held: the launch still runs (in parallel with this one, or a forked child of it that shares
///    the descriptor still does) → left alone, looked at again by a later launch.
/// 2. The lock is free but the process still exists — same boot, same pid, same start time — so the launch
///    exec'd another program (the close-on-exec descriptor went at the exec; a pid reused by another process
///    has another start time) → the marker is removed, no event.
/// 3. A crash report of the launch is in the directory (`…-<insert id>.json` or `.tmp`: the crash handler
///    was stopped after committing it), or a hang report `hang-<insert id>…` (the launch died while hung: that
///    report is the event, one death → one event) → the marker is removed, no event.
///    A launch whose user was opted out is not reported either.
/// 4. The termination monitor recorded that a termination signal ended the launch — SIGTERM, SIGINT, SIGHUP
///    (SIGQUIT, SIGUSR1, SIGUSR2) with its default action, or while the app's own handler for it ran → the marker
///    is removed, no event: a `systemctl stop`, `docker stop` or Ctrl-C is how a launch is meant to end, not an
///    error to track (an event per deploy per server would bury the real ones).
/// 5. Otherwise the launch ended abnormally → one fatal `$exception`
///    (``ExceptionBuilder/abnormalExit(_:cause:rebooted:)``), and the marker is removed once the event is durably
///    queued. When the app's handler of a termination signal had returned (the launch went on) the event says so:
///    it was then killed without exiting, typically by SIGKILL after a stop timeout.
///
/// Limits: a launch that exec'd a program that has already ended when the next launch looks is taken for a
/// killed one (call ``CohorlyCrash/prepareForExec()`` before an exec); `_exit()` outside a termination signal's
/// handler skips the exit hook and counts as abnormal.
enum AbnormalExits {
    /// Why a launch ended abnormally, as far as Linux can tell.
    enum Cause: String, Equatable, Sendable {
        /// Its memory cgroup's `oom_kill` counter rose during the launch.
        case oomKill = "oom_kill"
        /// Anything else: killed (SIGKILL, another uncaught signal, `_exit`) or lost power.
        case killedOrLostPower = "killed_or_lost_power"
        /// The app handled a termination signal and went on, then ended without an exit (SIGKILL after a stop
        /// timeout, typically).
        case killedAfterTerminationSignal = "killed_after_termination_signal"
    }

    /// What a marker means.
    enum Verdict: Equatable {
        /// The launch still runs.
        case running
        /// The launch exec'd another program.
        case execd(LaunchRecord)
        /// A termination signal ended the launch (no event).
        case terminated(LaunchRecord, LaunchRecord.Termination)
        /// A crash or hang report of the launch is its event, or the user was opted out.
        case reported
        /// Not a marker this version can read.
        case unreadable
        /// The launch ended abnormally.
        case abnormal(LaunchRecord, Cause, rebooted: Bool)
    }

    /// Sends one event per marker of an abnormally ended launch in `directory` (except this launch's own) to
    /// `cohorly`'s queue and removes the markers the launch no longer needs. Serialized with every other launch
    /// tidying the directory (its `.lock`), so two launches starting together send each event once.
    /// Returns how many events were queued.
    @discardableResult
    static func report(directory: String, to cohorly: Cohorly) -> Int {
        guard let folder = ReportDirectory(path: directory) else { return 0 }
        return folder.withLock {
            var queued = 0
            let names = folder.names()
            for name in names where LaunchRecord.isMarkerName(name) && name != LaunchMarker.currentName {
                guard folder.ownedRegularFile(name) != nil else { continue }
                let fd = openat(folder.descriptor, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                guard fd >= 0 else { continue }
                defer { close(fd) }
                switch verdict(fd: fd, names: names) {
                case .running: continue
                case .execd(let record), .terminated(let record, _):
                    // Not an abnormal end: the launch ends `exited` for a destination that follows launches.
                    cohorly.previousLaunchExited(
                        launchId: record.insertId, atMs: Int64(clamping: record.lastAliveMs))
                    folder.remove(name)
                case .reported, .unreadable: folder.remove(name)
                case .abnormal(let record, let cause, let rebooted):
                    let event = ExceptionBuilder.abnormalExit(record, cause: cause, rebooted: rebooted)
                    switch try? cohorly.enqueuePrepared(event) {
                    case .queued, .alreadyQueued:
                        queued += 1
                        if cohorly.queueIsPersisted { folder.remove(name) }  // else: sent again by the next launch
                    case .discardedOptedOut: folder.remove(name)
                    case nil: continue  // the queue could not be written: try again next launch
                    }
                }
            }
            removeAbandonedStaging(folder, names: names)
            return queued
        }
    }

    /// The verdict on the marker open at `fd`; `names` are the report directory's entries.
    static func verdict(fd: Int32, names: [String]) -> Verdict {
        guard HeldFile.claim(fd) else { return .running }
        guard let record = LaunchRecord.read(fd: fd) else { return .unreadable }
        let bootId = ProcessFacts.bootId()
        let sameBoot = !record.bootId.isEmpty && record.bootId == bootId
        if sameBoot, record.startTicks != 0, ProcessFacts.startTicks(of: record.pid) == record.startTicks {
            return .execd(record)
        }
        if record.optedOut || names.contains(where: { isReport($0, of: record.insertId) }) { return .reported }
        if let termination = record.termination, termination.state != .handled {
            return .terminated(record, termination)
        }
        let oom = record.oomCounters.contains { CgroupMemory.rose(since: $0) == true }
        let cause: Cause =
            oom ? .oomKill : record.termination != nil ? .killedAfterTerminationSignal : .killedOrLostPower
        return .abnormal(record, cause, rebooted: !sameBoot && !bootId.isEmpty)
    }

    /// Whether an event still to come tells how an earlier launch ended — a crash or hang report of it is in
    /// `directory` — or the launch still runs (its marker is there, after ``report(directory:to:)``), asked by
    /// launch id of the directory as it is now. Taken before the client reads its waiting sessions: a report
    /// queued (and deleted) in between has ended its session by then.
    static func pendingEnds(directory: String) -> (String) -> Bool {
        guard let folder = ReportDirectory(path: directory) else { return { _ in true } }  // cannot tell: wait
        let names = folder.names()
        return { launchId in
            let marker = LaunchRecord.fileName(insertId: launchId)
            return names.contains { $0 == marker || isReport($0, of: launchId) }
        }
    }

    /// Whether `name` is a crash report (`<ts>-<pid>-<insert id>.json|.tmp`) or a hang report
    /// (`hang-<insert id>…`) of the launch `insertId`.
    static func isReport(_ name: String, of insertId: String) -> Bool {
        if name.hasPrefix("hang-" + insertId) { return true }
        guard CrashReportStore.looksLikeReport(name) else { return false }
        return name.hasSuffix("-" + insertId + ".json") || name.hasSuffix("-" + insertId + ".tmp")
    }

    /// `launch-….new` files of launches that died while making their marker (unlocked, older than a minute).
    private static func removeAbandonedStaging(_ folder: ReportDirectory, names: [String]) {
        for name in names where name.hasPrefix(LaunchRecord.namePrefix) && name.hasSuffix(".new") {
            guard let info = folder.ownedRegularFile(name), time(nil) - info.st_mtim.tv_sec > 60 else { continue }
            let fd = openat(folder.descriptor, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if HeldFile.claim(fd) { folder.remove(name) }
        }
    }
}
