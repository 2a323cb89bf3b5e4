import Foundation

/// The persister: one background thread that turns what callers queued into queue records and commits them to
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
                case .flush(let completion):
                    delivery.requestFlush(throughId: lastId, completion: completion)
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
        var clears = false
        for operation in operations {
            switch operation {
            case .event(let event):
                let record = EventRecord(event, automatic: automatic, random: &random)
                if let problem = destination.problem(with: record) {
                    // One invalid event would make the server reject (400) the whole batch it travels in.
                    state.log("dropped event \"\(event.name)\": \(problem)")
                    continue
                }
                if record.json.utf8.count + 2 > options.maxRequestBytes {
                    tooLarge += 1
                    continue
                }
                records.append(.append(.event, insertId: record.insertId, json: record.json, prepared: false))
            case .exception(let pending):
                var record = pending.record
                for (key, value) in pending.superProperties where record.properties[key] == nil {
                    record.properties[key] = value
                }
                for (key, value) in automatic.values where record.properties[key] == nil {
                    record.properties[key] = value
                }
                if record.properties["distinct_id"] == nil {
                    record.properties["distinct_id"] = .string(pending.distinctId)
                }
                let summary = EventRecord(summarizing: record)
                if let problem = destination.problem(with: summary) {
                    state.log("dropped event \"\(summary.name)\": \(problem)")
                    continue
                }
                let changes = destination.willQueue(&record, meta: store.meta)
                if record.eventBytes + 2 > options.maxRequestBytes {
                    tooLarge += 1
                    continue
                }
                records.append(.append(.exception, insertId: record.insertId, json: record.json, prepared: false))
                records += changes
            case .profile(let operation):
                if let problem = destination.problem(with: operation) {
                    state.log(problem)
                    continue
                }
                records.append(.append(.profile, insertId: nil, json: operation.json, prepared: false))
            case .store(let operation):
                records.append(operation)
                if case .clear = operation { clears = true }
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
        // A reset or opt-out cleared records a batch in flight may still be retrying: stop those retries.
        if clears { delivery.cancelRetries() }
        delivery.notifyQueued()
    }

    /// Blocks until everything tracked before the call is committed to disk (a durability barrier: after it
    /// returns, a `kill -9` loses none of those events).
    public func waitUntilPersisted() {
        state.waitUntilPersisted()
    }
}
