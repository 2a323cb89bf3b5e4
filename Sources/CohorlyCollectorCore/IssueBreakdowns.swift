import CohorlySQLite

/// How an issue's occurrences spread over one tag's values: the most frequent values with their counts, and what the
/// rest add up to. A value nobody sent (an event without an environment) counts as a value of its own, nil.
struct TagBreakdown: Sendable, Equatable {
    /// `release`, `environment`, `os`, `host`, `user` or `thread` (``IssueQueries/breakdownTags``).
    var tag: String
    /// The issue's occurrences (every breakdown of one issue counts all of them).
    var total: Int
    /// The most frequent values, the most first (ties: in value order, nil last).
    var values: [(value: String?, count: Int)]
    /// How many distinct values there are, the ones shown included.
    var distinctValues: Int

    /// Occurrences with a value not among ``values``.
    var others: Int { total - values.reduce(0) { $0 + $1.count } }

    /// `count` as a percentage of ``total``, to one decimal.
    func percent(_ count: Int) -> Double {
        guard total > 0 else { return 0 }
        return (Double(count) * 1000 / Double(total)).rounded() / 10
    }

    /// `75 %`, `33.3 %`, `<0.1 %`.
    func percentText(_ count: Int) -> String {
        let value = percent(count)
        if value == 0 && count > 0 { return "<0.1 %" }
        return value == value.rounded() ? "\(Int(value)) %" : "\(value) %"
    }

    static func == (lhs: TagBreakdown, rhs: TagBreakdown) -> Bool {
        lhs.tag == rhs.tag && lhs.total == rhs.total && lhs.distinctValues == rhs.distinctValues
            && lhs.values.map(\.value) == rhs.values.map(\.value) && lhs.values.map(\.count) == rhs.values.map(\.count)
    }

    /// As `GET /api/issues/<id>` sends it: `{"tag","total","distinct","others","values":[{"value","count","percent"}]}`.
    var json: JSONValue {
        [
            "tag": .string(tag), "total": .int(total), "distinct": .int(distinctValues), "others": .int(others),
            "values": .array(
                values.map {
                    [
                        "value": $0.value.map(JSONValue.string) ?? .null, "count": .int($0.count),
                        "percent": .double(percent($0.count)),
                    ]
                }),
        ]
    }
}

extension IssueQueries {
    /// The tags an issue is broken down by, in the order shown.
    static let breakdownTags = ["release", "environment", "os", "host", "user", "thread"]

    /// Values of each tag a breakdown lists.
    static let breakdownValues = 5

    /// The issue's occurrences broken down by each of ``breakdownTags``, the `top` most frequent values each: one
    /// query over the occurrence rows (release, user) and `occurrence_tags` (the rest), staged rows included.
    func breakdowns(id: Int64, top: Int = IssueQueries.breakdownValues) throws -> [TagBreakdown] {
        let parts = Self.breakdownTags.map { tag in
            let column = tag == "user" ? "NULLIF(distinct_id, '')" : tag
            return "SELECT '\(tag)' AS tag, \(column) AS value, COUNT(*) AS n FROM o GROUP BY \(column)"
        }
        let sql = """
            WITH o AS MATERIALIZED (
                SELECT r.release, r.distinct_id, t.environment, t.os, t.host, t.thread FROM (
                    SELECT event_id, release, distinct_id FROM issue_occurrences WHERE issue_id = ?1
                    UNION ALL SELECT event_id, release, distinct_id FROM issue_occurrences_new WHERE issue_id = ?1) r
                LEFT JOIN occurrence_tags t ON t.event_id = r.event_id),
            counts AS (\(parts.joined(separator: " UNION ALL ")))
            SELECT tag, value, n, total, distinct_values FROM (
                SELECT tag, value, n, SUM(n) OVER w AS total, COUNT(*) OVER w AS distinct_values,
                    ROW_NUMBER() OVER (PARTITION BY tag ORDER BY n DESC, value IS NULL, value) AS rank
                FROM counts WINDOW w AS (PARTITION BY tag))
            WHERE rank <= ?2 ORDER BY tag, rank
            """
        var found: [String: TagBreakdown] = [:]
        try store.reading { db in
            try db.prepare(sql).rows([.int(id), .int(Int64(max(0, top)))]) { row in
                let tag = row.text(0) ?? ""
                var breakdown =
                    found[tag]
                    ?? TagBreakdown(
                        tag: tag, total: Int(clamping: row.int(3)), values: [],
                        distinctValues: Int(clamping: row.int(4)))
                breakdown.values.append((row.text(1), Int(clamping: row.int(2))))
                found[tag] = breakdown
                return true
            }
        }
        return Self.breakdownTags.compactMap { found[$0] }
    }
}
