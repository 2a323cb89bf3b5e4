/// A fully formed event that carries its own `time` and `$insert_id` (a crash report from a previous launch).
/// The client adds nothing to it except `distinct_id` when missing.
public struct PreparedEvent: Sendable, Hashable {
    /// The event name, e.g. `$exception`.
    public var name: String
    /// Its properties; must hold `$insert_id` (string) and `time` (unix milliseconds).
    public var properties: Properties

    /// An event with its final properties.
    public init(name: String, properties: Properties) {
        self.name = name
        self.properties = properties
    }
}

/// What `enqueuePrepared` did.
public enum PreparedEventDisposition: Sendable, Equatable {
    /// Committed to the persisted queue.
    case queued
    /// A record with the same `$insert_id` is already queued; nothing was added.
    case alreadyQueued
    /// The user opted out: the event was discarded and will never be sent.
    case discardedOptedOut
}

/// Why a prepared event was refused.
public enum CohorlyError: Error, Sendable, Equatable {
    /// A required property is missing or has the wrong type.
    case missingProperty(String)
    /// The event alone is larger than one request may be.
    case eventTooLarge(bytes: Int)
    /// The queue could not be written.
    case storage(String)
}

extension Cohorly {
    /// Queues a fully formed event and returns once it is durably committed to disk (or tells why not).
    ///
    /// Use it to hand over events whose loss would matter, such as crash reports: delete the source only after
    /// `.queued` or `.alreadyQueued`. The record leaves the queue only on a terminal server answer, and keeps
    /// its `$insert_id` across retries and restarts so the server dedupes resends. `reset()` keeps it.
    @discardableResult
    public func enqueuePrepared(_ event: PreparedEvent) throws -> PreparedEventDisposition {
        guard let insertId = event.properties["$insert_id"]?.stringValue, !insertId.isEmpty else {
            throw CohorlyError.missingProperty("$insert_id")
        }
        guard event.properties["time"]?.intValue != nil else {
            throw CohorlyError.missingProperty("time")
        }
        // Ops queued before this call (identify, opt-out) take effect first.
        waitUntilPersisted()
        var properties = event.properties
        let optedOut = state.withLock { state in
            if properties["distinct_id"] == nil { properties["distinct_id"] = .string(state.distinctId) }
            return state.optedOut
        }
        if optedOut { return .discardedOptedOut }
        let record = EventRecord(prepared: PreparedEvent(name: event.name, properties: properties))
        let json = record.json
        guard json.utf8.count + 2 <= options.maxRequestBytes else {
            throw CohorlyError.eventTooLarge(bytes: json.utf8.count)
        }
        do {
            let appended = try store.appendPrepared(.event, insertId: insertId, json: json, limit: options.maxQueueSize)
            delivery.notifyQueued()
            return appended ? .queued : .alreadyQueued
        } catch {
            throw CohorlyError.storage(String(describing: error))
        }
    }

    /// Queues a prepared exception (a crash report from a previous launch, an abnormal exit) and returns once it
    /// is durably committed to disk (or tells why not), as ``enqueuePrepared(_:)-(PreparedEvent)`` does for an
    /// event: delete the source only after `.queued` or `.alreadyQueued`. The client adds `distinct_id` when the
    /// record has none.
    @discardableResult
    public func enqueuePrepared(_ record: QueuedException) throws -> PreparedEventDisposition {
        guard !record.insertId.isEmpty else { throw CohorlyError.missingProperty("$insert_id") }
        waitUntilPersisted()
        var record = record
        let optedOut = state.withLock { state in
            if record.properties["distinct_id"] == nil { record.properties["distinct_id"] = .string(state.distinctId) }
            return state.optedOut
        }
        if optedOut { return .discardedOptedOut }
        let changes = destination.willQueue(&record, meta: store.meta)
        let bytes = record.eventBytes
        guard bytes + 2 <= options.maxRequestBytes else { throw CohorlyError.eventTooLarge(bytes: bytes) }
        do {
            let appended = try store.appendPrepared(
                .exception, insertId: record.insertId, json: record.json, limit: options.maxQueueSize)
            // Also when it was queued before: the changes that go with it may not have been committed then.
            if !changes.isEmpty { _ = try store.apply(changes, limit: options.maxQueueSize) }
            delivery.notifyQueued()
            return appended ? .queued : .alreadyQueued
        } catch {
            throw CohorlyError.storage(String(describing: error))
        }
    }
}
