import Foundation

/// One launch's release-health session (research/sentry.md "Sessions"): `ok` when the launch starts, `exited`
/// at its normal exit, `crashed` (in the crash event's envelope) or `abnormal` (with the abnormal-exit event)
/// when the next launch reports how it ended. Every update is a queue record (kind `session`, the item's payload
/// as JSON), so none is lost to a kill; the open session is kept in the queue's settings so that the next launch
/// — or the detached crash sender — can end it. Updates are queued as prepared records: `reset()` (a new user)
/// keeps them, as it keeps crash reports.
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

    /// The settings key of the launch's open session.
    static let openKey = "sentry_session"
    /// The settings key of the previous launch's session, open when that launch ended without a normal exit.
    static let previousKey = "sentry_previous_session"

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
    func update(status: String, atMs timeMs: Int64, initial: Bool) -> CohorlyValue {
        let errors = status == "crashed" ? max(1, self.errors) : self.errors
        return [
            "sid": .string(sid), "did": .string(did), "init": .bool(initial),
            "started": .string(RFC3339.format(milliseconds: startedMs)),
            "timestamp": .string(RFC3339.format(milliseconds: max(timeMs, startedMs))),
            "duration": .double(Double(max(0, timeMs - startedMs)) / 1000), "status": .string(status),
            "errors": .int(errors), "attrs": ["release": .string(release), "environment": .string(environment)],
        ]
    }
}

/// The sessions of one Sentry destination: this launch's (when the app started one) and the previous launch's,
/// which the first fatal event of that launch ends.
final class SentrySessions: @unchecked Sendable {
    private let lock = NSLock()
    private var current: SentrySession?
    /// The record property that carries the session update sent in a fatal event's envelope.
    static let property = "$sentry_session"

    /// Starts this launch's session: queues its `ok` update and keeps it (and the previous launch's, if it never
    /// ended) in the settings, in one transaction.
    func start(_ session: SentrySession, previous: String?) -> [QueueOperation] {
        lock.withLock { current = session }
        var operations: [QueueOperation] = [
            .append(
                .session, insertId: nil,
                json: session.update(status: "ok", atMs: session.startedMs, initial: true).jsonString,
                prepared: true),
            .setMeta(SentrySession.openKey, session.json),
        ]
        if let previous { operations.append(.setMeta(SentrySession.previousKey, previous)) }
        return operations
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
            .append(
                .session, insertId: nil,
                json: session.update(status: "exited", atMs: timeMs, initial: false).jsonString, prepared: true),
            .setMeta(SentrySession.openKey, nil),
        ]
    }

    /// What queuing `record` changes: a handled error counts in this launch's session; the previous launch's
    /// fatal event (crash, abnormal exit) ends that launch's session, carried in the record for its envelope.
    func willQueue(_ record: inout ExceptionRecord, meta: (String) -> String?) -> [QueueOperation] {
        if record.level == "error", let mechanism = record.exceptions.first?.mechanism, mechanism.handled {
            // Messages never count (research/sentry.md "Sessions").
            if mechanism.type == "generic" && mechanism.synthetic { return [] }
            return lock.withLock {
                guard current != nil else { return [] }
                current?.errors += 1
                return current.map { [.setMeta(SentrySession.openKey, $0.json)] } ?? []
            }
        }
        guard record.level == "fatal", record.properties[Self.property] == nil,
            let previous = SentrySession(json: meta(SentrySession.previousKey)),
            record.timestampMs >= previous.startedMs
        else { return [] }
        let abnormal = record.exceptions.first?.mechanism.type == "abnormal_exit"
        record.properties[Self.property] = previous.update(
            status: abnormal ? "abnormal" : "crashed", atMs: record.timestampMs, initial: false)
        return [.setMeta(SentrySession.previousKey, nil)]
    }
}
