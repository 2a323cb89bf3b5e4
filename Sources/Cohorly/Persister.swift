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
        var properties = automatic.values
        properties["distinct_id"] = .string(event.distinctId)
        properties["time"] = .int(Int(event.time))
        properties["$insert_id"] = .string(UUIDv4.make(using: &random))
        properties.merge(event.superProperties) { _, new in new }
        properties.merge(event.properties) { _, new in new }
        let json = CohorlyValue.object([
            "event": .string(event.name), "properties": .object(properties),
        ]).jsonString
        var problem: String?
        if event.name.isEmpty { problem = "empty event name" }
        switch properties["distinct_id"] {
        case .string(let id) where !id.isEmpty: break
        case .int: break
        default: problem = "distinct_id must be a non-empty string or an integer"
        }
        return (properties["$insert_id"]?.stringValue, json, problem)
    }

    /// Blocks until everything tracked before the call is committed to disk (a durability barrier: after it
    /// returns, a `kill -9` loses none of those events).
    public func waitUntilPersisted() {
        state.waitUntilPersisted()
    }
}
