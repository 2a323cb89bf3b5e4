import Foundation

/// The non-persistent queue: the fallback when no storage can be opened. Same contract as the SQLite store,
/// except that nothing survives the process.
final class MemoryQueueStore: QueueStore, @unchecked Sendable {
    private struct Record {
        var id: Int64
        var kind: RecordKind
        var insertId: String?
        var json: String
        var prepared: Bool
    }

    private let lock = NSLock()
    private var records: [Record] = []
    private var metaValues: [String: String] = [:]
    private var nextId: Int64 = 1

    var count: Int { lock.withLock { records.count } }
    var lastId: Int64 { lock.withLock { nextId - 1 } }

    func apply(_ operations: [QueueOperation], limit: Int) throws -> Int {
        lock.withLock { applyLocked(operations, limit: limit) }
    }

    func apply(limit: Int, _ decide: (any QueueSettings) -> [QueueOperation]) throws -> Int {
        lock.withLock { applyLocked(decide(Settings(values: metaValues)), limit: limit) }
    }

    private struct Settings: QueueSettings {
        let values: [String: String]
        func value(_ key: String) -> String? { values[key] }
        func values(prefix: String) -> [(key: String, value: String)] {
            values.filter { $0.key.hasPrefix(prefix) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    private func applyLocked(_ operations: [QueueOperation], limit: Int) -> Int {
        for operation in operations {
            switch operation {
            case .append(let kind, let insertId, let json, let prepared):
                records.append(Record(id: nextId, kind: kind, insertId: insertId, json: json, prepared: prepared))
                nextId += 1
            case .setMeta(let key, let value): metaValues[key] = value
            case .clear(let keepPrepared): records.removeAll { !keepPrepared || !$0.prepared }
            case .replace(let insertId, let json):
                for index in records.indices where records[index].prepared && records[index].insertId == insertId {
                    records[index].json = json
                }
            }
        }
        return trim(limit)
    }

    func appendPrepared(_ kind: RecordKind, insertId: String, json: String, limit: Int) throws -> Bool {
        lock.withLock {
            guard !records.contains(where: { $0.insertId == insertId }) else { return false }
            records.append(Record(id: nextId, kind: kind, insertId: insertId, json: json, prepared: true))
            nextId += 1
            _ = trim(limit)
            return true
        }
    }

    private func trim(_ limit: Int) -> Int {
        let excess = records.count - max(limit, 0)
        guard excess > 0 else { return 0 }
        // Ordinary records first, prepared events only when nothing else is left.
        let ordinary = records.filter { !$0.prepared }.prefix(excess).map(\.id)
        let prepared = records.filter(\.prepared).prefix(excess - ordinary.count).map(\.id)
        let dropped = Set(ordinary + prepared)
        records.removeAll { dropped.contains($0.id) }
        return excess
    }

    func nextBatch(maxCount: Int, maxBytes: Int, optionProperties: OptionProperties) throws -> QueueBatch? {
        lock.withLock {
            var entries: [QueueEntry] = []
            var bytes = 2
            var seen = Set<String>()
            for record in records.prefix(max(1, maxCount)) {
                let size = record.json.utf8.count + 1
                if !entries.isEmpty && bytes + size > maxBytes { break }
                if let insertId = record.insertId, !seen.insert(insertId).inserted { break }
                entries.append(
                    QueueEntry(id: record.id, kind: record.kind, insertId: record.insertId, json: record.json))
                bytes += size
            }
            return entries.isEmpty ? nil : QueueBatch(entries: entries)
        }
    }

    func remove(_ ids: [Int64]) throws {
        let removed = Set(ids)
        lock.withLock { records.removeAll { removed.contains($0.id) } }
    }

    func oldestId() throws -> Int64? { lock.withLock { records.first?.id } }

    func meta(_ key: String) -> String? { lock.withLock { metaValues[key] } }
}
