/// How deep stored JSON may nest, the one limit ingestion and every reader agree on: a record's properties (or a
/// whole `/engage`/`/alias` record) nest at most `stored` containers deep, counting the properties object itself;
/// ingestion refuses a deeper one with a per-record reason. A reader's page wraps an item in at most a few more
/// levels (`{"events":[{"properties":…}]}`), far inside the 512 levels every parser here reads, and each item is
/// clipped at `pageItem` levels before it is written (`clipped(depth:)`), so a record stored before the limit (or
/// by another writer) cannot make its whole page unreadable.
package enum NestingLimit {
    /// Containers a stored record's properties may nest: 100.
    package static let stored = 100
    /// Containers one item of a read page may nest (the stored limit and the item's own wrapping): 110.
    static let pageItem = stored + 10
}

extension JSONValue {
    /// How many containers deep the value nests: 0 for a scalar, 1 for `{}` or `[1]`, 2 for `{"a":[]}`.
    /// Stops counting past `limit` (returns `limit + 1`), so a deep value costs no more than the limit.
    package func nestingDepth(limit: Int = NestingLimit.stored) -> Int {
        guard limit >= 0 else { return 1 }
        switch self {
        case .array(let elements):
            var deepest = 0
            for element in elements where deepest < limit {
                deepest = max(deepest, element.nestingDepth(limit: limit - 1))
            }
            return 1 + deepest
        case .object(let members):
            var deepest = 0
            for value in members.values where deepest < limit {
                deepest = max(deepest, value.nestingDepth(limit: limit - 1))
            }
            return 1 + deepest
        default: return 0
        }
    }

    /// The value with every container deeper than `depth` levels replaced by the string
    /// `"(nested deeper than N levels)"`: what a reader can show of a record nested too deep.
    func clipped(depth: Int = NestingLimit.pageItem) -> JSONValue {
        guard nestingDepth(limit: depth) > depth else { return self }
        return clipping(remaining: depth, limit: depth)
    }

    private func clipping(remaining: Int, limit: Int) -> JSONValue {
        switch self {
        case .array(let elements):
            guard remaining > 0 else { return .string("(nested deeper than \(limit) levels)") }
            return .array(elements.map { $0.clipping(remaining: remaining - 1, limit: limit) })
        case .object(let members):
            guard remaining > 0 else { return .string("(nested deeper than \(limit) levels)") }
            return .object(members.mapValues { $0.clipping(remaining: remaining - 1, limit: limit) })
        default: return self
        }
    }
}
