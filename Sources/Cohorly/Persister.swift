import Foundation

/// The persister: one background thread that turns what callers queued into JSON records and commits them to
/// the store in one transaction per wake-up (group commit), then wakes delivery.
extension Cohorly {
    func runPersister() {
        var random = FastRandom()
        while true {
            let (operations, waiters, stopping) = state.take()
            if !operations.isEmpty { persist(operations, random: &random) }
            let lastId = store.lastId
            for waiter in waiters {
                switch waiter {
                case .flush(let continuation):
                    delivery.requestFlush(throughId: lastId, continuation: continuation)
                case .persisted(let semaphore): semaphore.signal()
                }
            }
            if stopping {
                persisterFinished.signal()
                return
            }
        }
    }

    private func persist(_ operations: [PendingOperation], random: inout FastRandom) {
        var records: [QueueOperation] = []
        records.reserveCapacity(operations.count)
        var tooLarge = 0
        for operation in operations {
            switch operation {
            case .event(let event):
                let (insertId, json, problem) = eventJSON(event, random: &random)
                if let problem {
                    // One invalid event would make the server reject (400) the whole batch it travels in.
                    state.log("dropped event \"\(event.name)\": \(problem)")
                    continue
                }
                if json.utf8.count + 2 > options.maxRequestBytes {
                    tooLarge += 1
                    continue
                }
                records.append(.append(.track, insertId: insertId, json: json, prepared: false))
            case .record(let endpoint, let value):
                records.append(.append(endpoint, insertId: nil, json: value.jsonString, prepared: false))
            case .store(let operation):
                records.append(operation)
            }
        }
        if tooLarge > 0 {
            state.log(
                "dropped \(tooLarge) event(s) larger than one request (\(options.maxRequestBytes) bytes)")
        }
        do {
            let dropped = try store.apply(records, limit: options.maxQueueSize)
            if dropped > 0 {
                let total = state.addDropped(dropped)
                state.log(
                    "queue full (\(options.maxQueueSize)): dropped the \(dropped) oldest record(s), \(total) since launch"
                )
            }
        } catch {
            state.log("cannot persist \(records.count) record(s): \(error)")
        }
        delivery.notifyQueued()
    }

    /// The event as sent: automatic < super < caller properties; returns its `$insert_id` too, and why the
    /// server would refuse it (an empty name, or a `distinct_id` that is not a non-empty string or an integer).
    func eventJSON(_ event: PendingEvent, random: inout FastRandom) -> (String?, String, String?) {
        // Written straight to JSON, layer by layer (caller, then super, then automatic, each skipping keys a
        // higher layer set), instead of merging dictionaries: the persister is the delivery pipeline's hot path.
        let caller = event.properties
        let superProperties = event.superProperties
        func effective(_ key: String) -> CohorlyValue? { caller[key] ?? superProperties[key] }
        var out = "{\"event\":"
        out.reserveCapacity(512)
        CohorlyValue.writeString(event.name, into: &out)
        out += ",\"properties\":{"
        var first = true
        func member(_ key: String, _ value: CohorlyValue) {
            if !first { out += "," }
            first = false
            CohorlyValue.writeString(key, into: &out)
            out += ":"
            value.write(into: &out)
        }
        for (key, value) in caller { member(key, value) }
        for (key, value) in superProperties where caller[key] == nil { member(key, value) }
        for (key, value) in automatic.values where effective(key) == nil { member(key, value) }
        let distinctId = effective("distinct_id") ?? .string(event.distinctId)
        if effective("distinct_id") == nil { member("distinct_id", distinctId) }
        if effective("time") == nil { member("time", .int(Int(event.time))) }
        var insertId = effective("$insert_id")
        if insertId == nil {
            let generated = CohorlyValue.string(UUIDv4.make(using: &random))
            member("$insert_id", generated)
            insertId = generated
        }
        out += "}}"
        var problem: String?
        if event.name.isEmpty { problem = "empty event name" }
        switch distinctId {
        case .string(let id) where !id.isEmpty: break
        case .int: break
        default: problem = "distinct_id must be a non-empty string or an integer"
        }
        return (insertId?.stringValue, out, problem)
    }

    /// Blocks until everything tracked before the call is committed to disk (a durability barrier: after it
    /// returns, a `kill -9` loses none of those events).
    public func waitUntilPersisted() {
        state.waitUntilPersisted()
    }
}
