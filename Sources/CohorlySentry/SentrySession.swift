import CohorlyClient
import CohorlyLaunch
import Foundation

/// One launch's release-health session (docs/sentry.md "Release health"): `ok` when the launch starts, `exited`
/// at its normal exit, `crashed` (in the crash event's envelope) or `abnormal` (with the abnormal-exit event)
/// when the next launch reports how it ended. Every update is a queue record (kind `session`, the item's payload
/// as JSON), so none is lost to a kill; the open session is kept in the queue's settings (one key per launch, held
/// by the launch's ``SessionLock`` while it runs) so that a later launch — or the detached crash sender — can
/// end it. Updates are queued as prepared records: `reset()` (a new user)
/// keeps them, as it keeps crash reports.
///
/// How a later launch ends a session left open: when a crash monitor (CohorlyCrash) watched the launch
/// (``launchId``), the session waits for the monitor's verdict — `crashed` with the crash event, `abnormal` with
/// the abnormal-exit event, `exited` for a termination signal or an exec, `abnormal` when the monitor finds
/// nothing of the launch; else, when a later launch starts and finds the launch's lock free, `abnormal`: nothing
/// could have seen how it ended (kill -9, OOM, power loss, a crash). The sessions are read and changed in the
/// queue's write transaction, so launches starting at the same moment never both end one.
struct SentrySession: Codable, Equatable {
    /// The session id (a UUID).
    var sid: String
    /// The user (`did`): the distinct id when the launch started.
    var did: String
    /// When the launch started, unix milliseconds.
    var startedMs: Int64
    /// Handled errors (level error) so far.
    var errors: Int
    var release: String
    var environment: String
    /// The crash monitor's name for the launch (CohorlyCrash's launch insert id, which its crash report and
    /// abnormal-exit event carry) when one watches it; nil when nothing does.
    var launchId: String?

    /// The settings key of a launch's open session: one per launch (``openKey(_:)``), so launches running at the
    /// same time never rewrite each other's.
    static let openPrefix = "sentry_session."
    /// The settings key of the open session in earlier versions (one for all launches).
    static let legacyOpenKey = "sentry_session"
    /// The settings key of the previous launch's session in earlier versions (one, without a launch id): ended by
    /// the first fatal event after its start.
    static let previousKey = "sentry_previous_session"
    /// The settings key of the index of waiting sessions in earlier versions: no longer read (each waiting session
    /// is found by its own key), removed when a launch starts.
    static let legacyWaitingIndexKey = "sentry_waiting"
    /// The settings keys of sessions waiting for their monitor's verdict, one per launch (``waitingKey(_:)``).
    static let waitingPrefix = "sentry_waiting."
    /// At most this many sessions wait; beyond, the oldest ends `abnormal`.
    static let maxWaiting = 16

    /// The settings key of session `sid` while its launch runs.
    static func openKey(_ sid: String) -> String { openPrefix + sid }

    /// The settings key of the session of launch `launchId` while it waits.
    static func waitingKey(_ launchId: String) -> String { waitingPrefix + launchId.lowercased() }

    /// The settings key holding the sid of the open session of monitored launch `launchId` while it runs: the sender
    /// its crash handler starts ends that session `crashed` before any later launch made it wait.
    static func launchKey(_ launchId: String) -> String { launchPrefix + launchId.lowercased() }
    static let launchPrefix = "sentry_launch."

    /// The sessions waiting for a verdict, oldest first.
    static func waiting(_ settings: any QueueSettings) -> [SentrySession] {
        settings.values(prefix: waitingPrefix).compactMap { SentrySession(json: $0.value) }.sorted {
            ($0.startedMs, $0.sid) < ($1.startedMs, $1.sid)
        }
    }

    init(did: String, release: String, environment: String, startedMs: Int64) {
        sid = UUIDv4.make()
        self.did = did
        self.startedMs = startedMs
        errors = 0
        self.release = release
        self.environment = environment
    }

    /// The settings JSON.
    var json: String {
        (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The session settings `json` hold (nil for none).
    init?(json: String?) {
        guard let json, let session = try? JSONDecoder().decode(SentrySession.self, from: Data(json.utf8)) else {
            return nil
        }
        self = session
    }

    /// The session item's payload for an update with `status` at `timeMs` (`initial`: the first update).
    /// `observed` false: the end was not seen, only found at `timeMs` (the next launch), so the update has no
    /// `duration` (Sentry's duration metric counts exited sessions only).
    func update(status: String, atMs timeMs: Int64, initial: Bool, observed: Bool = true) -> CohorlyValue {
        let errors = status == "crashed" ? max(1, self.errors) : self.errors
        var payload: [String: CohorlyValue] = [
            "sid": .string(sid), "did": .string(did), "init": .bool(initial),
            "started": .string(RFC3339.format(milliseconds: startedMs)),
            "timestamp": .string(RFC3339.format(milliseconds: max(timeMs, startedMs))), "status": .string(status),
            "errors": .int(errors), "attrs": ["release": .string(release), "environment": .string(environment)],
        ]
        if observed { payload["duration"] = .double(Double(max(0, timeMs - startedMs)) / 1000) }
        return .object(payload)
    }

    /// The queue record of an update. The first update's record has a dedupe key (``startKey``), by which it is
    /// rewritten while queued when the launch's release becomes known (``SentrySessions/launchRelease(_:)``).
    func record(status: String, atMs timeMs: Int64, initial: Bool, observed: Bool = true) -> QueueOperation {
        .append(
            .launch, insertId: initial ? startKey : nil,
            json: update(status: status, atMs: timeMs, initial: initial, observed: observed).jsonString, prepared: true)
    }

    /// The dedupe key of the session's first update in the queue.
    var startKey: String { "sentry-session-start." + sid }
}

/// The sessions of one Sentry destination: this launch's (when the app started one) and those of earlier launches
/// waiting for their monitor's verdict.
final class SentrySessions: @unchecked Sendable {
    private let lock = NSLock()
    private var current: SentrySession?
    private var heldLock: SessionLock?
    /// This launch's claim on its open session (nil: the queue is not on disk, or the lock could not be taken).
    var launchLock: SessionLock? {
        get { lock.withLock { heldLock } }
        set { lock.withLock { heldLock = newValue } }
    }
    /// The record property that carries the session update sent in a fatal event's envelope.
    static let property = "$sentry_session"

    /// Starts this launch's session: queues its `ok` update and keeps it in the settings, in one transaction
    /// (`settings` as it reads them) with what becomes of the sessions earlier launches left open: those whose
    /// launch no longer runs (`running(sid)` false). When a crash monitor watched such a launch, its session waits
    /// for a verdict (``previousExited(launchId:atMs:settings:)``, ``previousExamined(pending:atMs:settings:)`` or
    /// the fatal event, in ``willQueue(_:meta:)``), else it ends `abnormal` now. Returns the operations and the
    /// sids of the sessions taken (their launch locks can go once this is committed).
    func start(
        _ session: SentrySession, settings: any QueueSettings, running: (String) -> Bool, atMs timeMs: Int64
    ) -> (operations: [QueueOperation], taken: [String]) {
        lock.withLock { current = session }
        var operations: [QueueOperation] = [.setMeta(SentrySession.legacyWaitingIndexKey, nil)]
        var left: [(key: String, session: SentrySession)] = []
        if let legacy = SentrySession(json: settings.value(SentrySession.legacyOpenKey)) {
            left.append((SentrySession.legacyOpenKey, legacy))
        }
        for (key, json) in settings.values(prefix: SentrySession.openPrefix) {
            guard let open = SentrySession(json: json) else {
                operations.append(.setMeta(key, nil))
                continue
            }
            if !running(open.sid) { left.append((key, open)) }
        }
        var waiting = SentrySession.waiting(settings)
        for (key, open) in left {
            operations.append(.setMeta(key, nil))
            if let launchId = open.launchId {
                operations.append(.setMeta(SentrySession.launchKey(launchId), nil))
                operations.append(.setMeta(SentrySession.waitingKey(launchId), open.json))
                waiting.removeAll { $0.launchId?.lowercased() == launchId.lowercased() }
                waiting.append(open)
            } else {
                operations.append(open.record(status: "abnormal", atMs: timeMs, initial: false, observed: false))
            }
        }
        waiting.sort { ($0.startedMs, $0.sid) < ($1.startedMs, $1.sid) }
        for oldest in waiting.dropLast(SentrySession.maxWaiting) {
            operations += end(oldest, status: "abnormal", atMs: timeMs, observed: false)
        }
        operations += [
            session.record(status: "ok", atMs: session.startedMs, initial: true),
            .setMeta(SentrySession.openKey(session.sid), session.json),
        ]
        return (operations, left.map(\.session.sid))
    }

    /// The update that ends the waiting `session`, and its removal from the settings.
    private func end(_ session: SentrySession, status: String, atMs timeMs: Int64, observed: Bool = true)
        -> [QueueOperation]
    {
        [session.record(status: status, atMs: timeMs, initial: false, observed: observed)] + removal(of: session)
    }

    /// Removes the ended `session` wherever it is kept: waiting, or still open (its launch crashed and the crash's
    /// own sender ends it).
    private func removal(of session: SentrySession) -> [QueueOperation] {
        guard let launchId = session.launchId else { return [.setMeta(SentrySession.previousKey, nil)] }
        return [
            .setMeta(SentrySession.waitingKey(launchId), nil), .setMeta(SentrySession.openKey(session.sid), nil),
            .setMeta(SentrySession.launchKey(launchId), nil),
        ]
    }

    /// This launch's release is `release` (given to the crash monitor, as its events carry it): this launch's session
    /// carries it from now on, in its settings and in its first update while that is still queued. Nothing when
    /// there is no session or it carries that release already.
    func launchRelease(_ release: String) -> [QueueOperation] {
        lock.withLock {
            guard var session = current, !release.isEmpty, session.release != release else { return [] }
            session.release = release
            current = session
            var first = session
            first.errors = 0
            let update = first.update(status: "ok", atMs: session.startedMs, initial: true)
            return [
                .setMeta(SentrySession.openKey(session.sid), session.json),
                .replace(insertId: session.startKey, json: update.jsonString),
            ]
        }
    }

    /// A crash monitor watches this launch and knows it as `launchId`: a later launch's monitor tells how it ended.
    func monitored(by launchId: String) -> [QueueOperation] {
        lock.withLock {
            current?.launchId = launchId
            return current.map {
                [.setMeta(SentrySession.openKey($0.sid), $0.json), .setMeta(SentrySession.launchKey(launchId), $0.sid)]
            } ?? []
        }
    }

    /// An earlier launch, known to its monitor as `launchId`, ended without a crash at `timeMs` (a termination
    /// signal, an exec): its session, if waiting, ends `exited`.
    func previousExited(launchId: String, atMs timeMs: Int64, settings: any QueueSettings) -> [QueueOperation] {
        guard let session = SentrySession(json: settings.value(SentrySession.waitingKey(launchId))) else { return [] }
        return end(session, status: "exited", atMs: timeMs)
    }

    /// This launch's monitor has looked at the earlier launches: each waiting session ends `abnormal` at `timeMs`
    /// unless `pending(launchId)` — an event still to come ends it (its crash or hang report is there), or the
    /// launch still runs.
    func previousExamined(pending: (String) -> Bool, atMs timeMs: Int64, settings: any QueueSettings)
        -> [QueueOperation]
    {
        SentrySession.waiting(settings).filter { session in session.launchId.map { !pending($0) } ?? false }.flatMap {
            end($0, status: "abnormal", atMs: timeMs, observed: false)
        }
    }

    /// Ends this launch's session as `exited` (nothing when it has none).
    func exit(atMs timeMs: Int64) -> [QueueOperation] {
        guard
            let session = lock.withLock({ () -> SentrySession? in
                defer { current = nil }
                return current
            })
        else { return [] }
        return [
            session.record(status: "exited", atMs: timeMs, initial: false),
            .setMeta(SentrySession.openKey(session.sid), nil),
        ] + (session.launchId.map { [.setMeta(SentrySession.launchKey($0), nil)] } ?? [])
    }

    /// What queuing `record` changes: a handled error counts in this launch's session; an earlier launch's fatal
    /// event (crash, abnormal exit) ends that launch's waiting session, carried in the record for its envelope.
    func willQueue(_ record: inout QueuedException, meta: (String) -> String?) -> [QueueOperation] {
        let exception = record.exception
        if record.level == "error", exception.handled {
            // Messages never count (docs/sentry.md "Release health").
            if exception.description.mechanism == "generic" && exception.synthetic { return [] }
            return lock.withLock {
                guard current != nil else { return [] }
                current?.errors += 1
                return current.map { [.setMeta(SentrySession.openKey($0.sid), $0.json)] } ?? []
            }
        }
        guard record.level == "fatal", record.properties[Self.property] == nil else { return [] }
        let waiting =
            SentrySession(json: meta(SentrySession.waitingKey(record.insertId)))
            ?? meta(SentrySession.launchKey(record.insertId)).flatMap {
                SentrySession(json: meta(SentrySession.openKey($0)))
            }
            .flatMap { $0.launchId?.lowercased() == record.insertId.lowercased() ? $0 : nil }
            ?? SentrySession(json: meta(SentrySession.previousKey)).flatMap {
                $0.launchId == nil && record.timestampMs >= $0.startedMs ? $0 : nil
            }
        guard let session = waiting else { return [] }
        let abnormal = exception.description.mechanism == "abnormal_exit"
        // The update travels in the event's envelope, not on its own.
        record.properties[Self.property] = session.update(
            status: abnormal ? "abnormal" : "crashed", atMs: record.timestampMs, initial: false)
        return removal(of: session)
    }
}
