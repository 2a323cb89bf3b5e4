/// The launch protocol: how the processes of one app — its launches, the crash handler of a dying launch, and
/// the detached senders — coordinate through files, and which of them may move each state. The one owner of
/// every lock file (``LaunchLock``, ``LockFile``, ``SessionLock``, ``HeldFile``); docs/internals.md ("The launch
/// protocol") draws the diagram and the lock table.
///
/// The parts that need the crash recorder sit beside it in CohorlyCrash (`LaunchMarker`, `CrashEventSender`,
/// `HangReportFile`, `AbnormalExits`) and in CCrashRecorder (cly_launch_marker.c, cly_crash_time_sender.c,
/// cly_sender_mode.c); each takes its locks here.
package enum LaunchProtocol {
    /// Where one launch is. The marker (`launch-<insert id>.marker` in the report directory) is held by the launch
    /// (``HeldFile``) from ``started`` to its end; whoever finds it free and left behind reads how it ended.
    package enum LaunchState: String, CaseIterable, Sendable {
        /// Making its marker under a temporary name (`launch-<id>.new`), held before it is named.
        case started
        /// Its marker has its name and is held: it runs (a later launch that finds it held leaves it alone).
        case running
        /// Hung: `hang-<id>.json` is written and held while the hang lasts.
        case hung
        /// Ended normally (the recorder's atexit hook removed the marker) or exec'd (`prepareForExec`).
        case endedCleanly
        /// Crashed: the handler committed its report, removed the marker, and started the crash-time sender.
        case crashed
        /// Killed, out of memory, powered off, or ended by a termination signal: its marker is left, free.
        case endedUnseen
        /// A later launch read the marker it left and queued the abnormal exit's event (or found its report).
        case examined
    }

    /// Where one crash (or died-while-hung) report is, from the handler's write to the destination's answer.
    package enum ReportState: String, CaseIterable, Sendable {
        /// `<time>-<pid>-<insert id>.json` committed in the report directory (`.tmp` while written).
        case written
        /// Being turned into an event (symbolicated) by the one process holding `crash-delivery.lock`.
        case claimed
        /// Its event is in the persisted queue (one record per `$insert_id`) and the report file is removed.
        case queued
        /// Its record is being sent by the one process holding `queue.lock`.
        case sending
        /// The destination gave a terminal answer: the record left the queue.
        case delivered
        /// Unreadable, too large, or its parsing killed launches: moved to `quarantine/` (under `.lock`).
        case quarantined
    }

    /// The kinds of process that take part.
    package enum Actor: String, Sendable {
        /// A launch of the app (its install, its delivery thread, its exit hook).
        case launch
        /// The crash handler of a dying launch (async-signal-safe C).
        case crashHandler = "crash handler"
        /// A detached sender: started by a launch that found reports, or by the crash handler.
        case sender
        /// A later launch, or a sender, looking at what an earlier launch left.
        case later = "later launch or sender"
    }

    /// One move of the state machine: who may make it, and under which lock (nil: none is needed, because the
    /// file moved is the mover's own).
    package struct Transition: Sendable {
        package let from: String
        package let to: String
        package let mover: Actor
        package let lock: String?
    }

    /// Every move the protocol allows. Any other is a bug.
    package static let transitions: [Transition] = [
        .init(from: "started", to: "running", mover: .launch, lock: "the marker (held before it is named)"),
        .init(from: "running", to: "hung", mover: .launch, lock: "the hang file (held before it is named)"),
        .init(from: "hung", to: "running", mover: .launch, lock: "the hang file"),
        .init(from: "running", to: "endedCleanly", mover: .launch, lock: "the marker"),
        .init(from: "running", to: "crashed", mover: .crashHandler, lock: "the marker"),
        .init(from: "running", to: "endedUnseen", mover: .launch, lock: nil),
        .init(from: "endedUnseen", to: "examined", mover: .later, lock: LaunchLock.reportDirectory.fileName),
        .init(from: "written", to: "claimed", mover: .later, lock: LaunchLock.crashDelivery.fileName),
        .init(from: "claimed", to: "queued", mover: .later, lock: LaunchLock.crashDelivery.fileName),
        .init(from: "written", to: "quarantined", mover: .later, lock: LaunchLock.reportDirectory.fileName),
        .init(from: "queued", to: "sending", mover: .later, lock: LaunchLock.queue.fileName),
        .init(from: "sending", to: "queued", mover: .later, lock: LaunchLock.queue.fileName),
        .init(from: "sending", to: "delivered", mover: .later, lock: LaunchLock.queue.fileName),
    ]
}
