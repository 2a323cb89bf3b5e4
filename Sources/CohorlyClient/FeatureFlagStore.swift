import Foundation

/// The client's feature flags: what reads serve (under one lock, never touching the network or the disk), the
/// persisted cache (one `feature_flags` setting in the queue's database, scoped by distinct id and stamped with
/// `stored_at`), evaluations on a serial queue, listeners and exposure dedupe.
final class FeatureFlagStore: @unchecked Sendable {
    /// A served flag.
    struct Entry {
        var flag: EvaluatedFlag
        /// `.network` or `.persistence`.
        var source: FeatureFlagSource
        /// The cache's `stored_at` (persistence entries; nil for a legacy cache).
        var persistedAt: Date?
        /// Whether this (key, value) was already reported for the current identity.
        var reported: Bool
    }

    private struct Exposure: Hashable {
        var key: String
        var value: FeatureFlagValue
    }

    static let metaKey = "feature_flags"

    private let lock = ConditionLock()
    // Under `lock`.
    private var entries: [String: Entry] = [:]
    private var distinctId: String
    private var generation = 0
    private var exposed: Set<Exposure> = []
    private var listeners: [@Sendable ([String: FeatureFlagValue]) -> Void] = []
    /// (distinct id, key, value) reported by `evaluateRemotely`.
    private var remoteExposed: Set<[String]> = []

    /// Evaluations, cache writes and listener calls, in order.
    let queue = DispatchQueue(label: "cohorly.flags")
    private let store: any QueueStore
    private let destination: (any FlagsDestination)?
    private let transport: any Transport
    private let options: CohorlyOptions
    private let log: @Sendable (String) -> Void
    private let anonymousId: @Sendable () -> String
    private let track: @Sendable (String, Properties) -> Void

    init(
        distinctId: String, store: any QueueStore, destination: (any FlagsDestination)?, transport: any Transport,
        options: CohorlyOptions, log: @escaping @Sendable (String) -> Void,
        anonymousId: @escaping @Sendable () -> String, track: @escaping @Sendable (String, Properties) -> Void
    ) {
        self.distinctId = distinctId
        self.store = store
        self.destination = destination
        self.transport = transport
        self.options = options
        self.log = log
        self.anonymousId = anonymousId
        self.track = track
        loadPersisted()
    }

    private var ttl: TimeInterval { options.flagCacheTTL }

    /// Whether a persistence entry written at `persistedAt` may serve at `now` under the policy. A legacy cache
    /// (no timestamp) cannot be dated: it serves until a successful evaluation rewrites it.
    private func servable(persistedAt: Date?, now: Date) -> Bool {
        guard let persistedAt else { return true }
        let age = now.timeIntervalSince(persistedAt)
        switch options.flagPersistence {
        case .networkOnly: return false
        case .networkFirst: return age <= ttl
        case .persistenceUntilNetworkSuccess: return age <= max(ttl, Cohorly.flagCacheMaxStale)
        }
    }

    // MARK: Reads (caller's thread)

    /// The served entry for `key` (nil: the caller's fallback) and, the first time this (key, value) is served to
    /// this identity, the `$feature_flag_called` event is tracked.
    func read(_ key: String) -> Entry? {
        lock.lock()
        guard var entry = entries[key] else {
            lock.unlock()
            return nil
        }
        if entry.source == .persistence, entry.persistedAt != nil,
            !servable(persistedAt: entry.persistedAt, now: options.flagClock())
        {
            lock.unlock()
            return nil
        }
        guard !entry.reported else {
            lock.unlock()
            return entry
        }
        entry.reported = true
        entries[key] = entry
        exposed.insert(Exposure(key: key, value: entry.flag.value))
        lock.unlock()
        track("$feature_flag_called", exposureProperties(key, entry))
        return entry
    }

    private func exposureProperties(_ key: String, _ entry: Entry) -> Properties {
        var properties = entry.flag.exposureProperties
        properties["$feature_flag"] = .string(key)
        properties["$feature_flag_response"] = entry.flag.value.propertyValue
        properties["$feature_flag_source"] = .string(entry.source.rawValue)
        if entry.source == .persistence {
            if let persistedAt = entry.persistedAt {
                properties["$feature_flag_persisted_at"] = .int(Self.milliseconds(persistedAt))
            }
            properties["$feature_flag_ttl_ms"] = .int(Self.milliseconds(ttl))
        }
        return properties
    }

    /// The details a read reports for `entry`.
    func details(_ key: String, _ entry: Entry) -> FeatureFlagDetails {
        let persisted = entry.source == .persistence
        return FeatureFlagDetails(
            key: key, value: entry.flag.value, source: entry.source, enabled: entry.flag.enabled,
            payload: entry.flag.payload, persistedAt: persisted ? entry.persistedAt : nil,
            ttlMs: persisted ? Self.milliseconds(ttl) : nil)
    }

    /// Every served flag's value (what listeners receive).
    var values: [String: FeatureFlagValue] {
        lock.withLock { entries.mapValues { $0.flag.value } }
    }

    // MARK: Identity

    /// The distinct id changed (`identify`, `reset`): the previous identity's flags stop serving at once, then,
    /// in order on the flags queue, its cache is removed, listeners hear an empty map and the new identity is
    /// evaluated. Called with the client's state lock held: only memory is touched here.
    func identityChanged(to newId: String) {
        let changed: Bool = lock.withLock {
            guard newId != distinctId else { return false }
            distinctId = newId
            generation += 1
            entries = [:]
            exposed = []
            return true
        }
        guard changed else { return }
        queue.async { [self] in
            writeCache(nil)
            notify([:])
            evaluate()
        }
    }

    // MARK: Evaluation (flags queue)

    /// Schedules an evaluation; `done` runs after it.
    func reload(_ done: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in
            evaluate()
            done()
        }
    }

    /// Asks the destination for the current identity's flags and serves the answer, unless the identity changed
    /// meanwhile. A failure keeps what is served and logs why.
    private func evaluate() {
        dispatchPrecondition(condition: .onQueue(queue))
        let (id, asked) = lock.withLock { (distinctId, generation) }
        guard let destination else {
            log("feature flags: this destination cannot evaluate flags; reads give their fallback")
            return
        }
        let answer = destination.evaluateFlags(
            FlagsRequest(distinctId: id, anonymousId: anonymousId()), transport: transport, options: options)
        switch answer {
        case .failure(let reason):
            let kept = lock.withLock { entries.count }
            log("feature flags: evaluation failed (\(reason)); still serving \(kept) flag(s)")
        case .flags(let flags), .partial(let flags):
            var replace = false
            if case .flags = answer { replace = true }
            let served: [String: EvaluatedFlag]? = lock.withLock {
                guard generation == asked else { return nil }
                if replace { entries = [:] }
                for (key, flag) in flags {
                    entries[key] = Entry(
                        flag: flag, source: .network, persistedAt: nil,
                        reported: exposed.contains(Exposure(key: key, value: flag.value)))
                }
                return entries.mapValues(\.flag)
            }
            guard let served else {
                log("feature flags: answer for a previous identity dropped")
                return
            }
            if options.flagPersistence != .networkOnly {
                writeCache(Self.cacheJSON(distinctId: id, storedAt: options.flagClock(), flags: served))
            }
            log(
                "feature flags: \(flags.count) flag(s) evaluated for the current identity\(replace ? "" : " (partial answer merged)")"
            )
            notify(served.mapValues(\.value))
        }
    }

    /// Evaluates `key` over the network for `request` (any identity, not the served flags), blocking the caller
    /// (never the flags queue) until the answer; the first time a (distinct id, key, value) is seen,
    /// `$feature_flag_called` is tracked for that distinct id. Nil for an unknown key or a failed evaluation.
    func evaluateRemotely(_ key: String, _ request: FlagsRequest) -> EvaluatedFlag? {
        guard let destination else { return nil }
        var asked = request
        asked.keys = [key]
        let answer = queue.sync { destination.evaluateFlags(asked, transport: transport, options: options) }
        let flag: EvaluatedFlag?
        switch answer {
        case .failure(let reason):
            log("feature flags: evaluation of \(key) failed (\(reason))")
            return nil
        case .flags(let flags), .partial(let flags): flag = flags[key]
        }
        guard let flag else { return nil }
        let first = lock.withLock { remoteExposed.insert([request.distinctId, key, flag.value.description]).inserted }
        if first {
            var properties = flag.exposureProperties
            properties["$feature_flag"] = .string(key)
            properties["$feature_flag_response"] = flag.value.propertyValue
            properties["$feature_flag_source"] = .string(FeatureFlagSource.network.rawValue)
            properties["distinct_id"] = .string(request.distinctId)
            track("$feature_flag_called", properties)
        }
        return flag
    }

    private func notify(_ values: [String: FeatureFlagValue]) {
        let current = lock.withLock { listeners }
        for listener in current { listener(values) }
    }

    /// Adds a listener; it hears the current flags at once (on the flags queue) when some are served.
    func addListener(_ listener: @escaping @Sendable ([String: FeatureFlagValue]) -> Void) {
        lock.withLock { listeners.append(listener) }
        queue.async { [self] in
            let current = values
            if !current.isEmpty { listener(current) }
        }
    }

    // MARK: Persistence

    private func writeCache(_ json: String?) {
        do {
            _ = try store.apply([.setMeta(Self.metaKey, json)], limit: Int.max)
        } catch {
            log("feature flags: cache not written (\(error))")
        }
    }

    /// Serves the persisted cache when it belongs to the current identity and the policy allows it; drops it
    /// when it belongs to another identity or is too old to ever serve.
    private func loadPersisted() {
        guard options.flagPersistence != .networkOnly, let json = store.meta(Self.metaKey) else { return }
        guard let cache = Self.parseCache(json) else {
            log("feature flags: persisted cache unreadable; ignored")
            return
        }
        guard cache.distinctId == distinctId, servable(persistedAt: cache.storedAt, now: options.flagClock()) else {
            log("feature flags: persisted cache of another identity or expired; removed")
            writeCache(nil)
            return
        }
        entries = cache.flags.mapValues {
            Entry(flag: $0, source: .persistence, persistedAt: cache.storedAt, reported: false)
        }
    }

    static func cacheJSON(distinctId: String, storedAt: Date, flags: [String: EvaluatedFlag]) -> String {
        var object: Properties = [:]
        for (key, flag) in flags {
            var member: Properties = ["enabled": .bool(flag.enabled)]
            if let variant = flag.variant { member["variant"] = .string(variant) }
            if let payload = flag.payload { member["payload"] = payload }
            if !flag.exposureProperties.isEmpty { member["exposure"] = .object(flag.exposureProperties) }
            object[key] = .object(member)
        }
        return CohorlyValue.object([
            "distinct_id": .string(distinctId), "stored_at": .int(milliseconds(storedAt)), "flags": .object(object),
        ]).jsonString
    }

    /// A persisted cache: `{"distinct_id", "stored_at"? (ms), "flags": {key: {enabled, variant?, payload?}}}`.
    static func parseCache(_ json: String) -> (distinctId: String, storedAt: Date?, flags: [String: EvaluatedFlag])? {
        guard let object = CohorlyValue(json: json)?.objectValue, let id = object["distinct_id"]?.stringValue,
            let flags = object["flags"]?.objectValue
        else { return nil }
        var storedAt: Date?
        if let stamp = object["stored_at"] {
            guard let milliseconds = stamp.intValue else { return nil }
            storedAt = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        }
        var result: [String: EvaluatedFlag] = [:]
        for (key, value) in flags {
            guard let member = value.objectValue, case .bool(let enabled) = member["enabled"] else { return nil }
            result[key] = EvaluatedFlag(
                enabled: enabled, variant: member["variant"]?.stringValue, payload: member["payload"],
                exposureProperties: member["exposure"]?.objectValue ?? [:])
        }
        return (id, storedAt, result)
    }

    static func milliseconds(_ date: Date) -> Int { milliseconds(date.timeIntervalSince1970) }

    static func milliseconds(_ seconds: TimeInterval) -> Int {
        let value = (seconds * 1000).rounded()
        return value.isFinite && abs(value) < 9.0e15 ? Int(value) : 0
    }
}
