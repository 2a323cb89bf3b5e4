import CohorlyCollectorCore

extension SentryEventRecord {
    /// Sentry's `fingerprint` (a list of strings) as the `$exception_fingerprint` the issue grouping reads
    /// (IssueKey.swift), or nil: absent, empty, or naming `{{ default }}` (Sentry's default grouping, which the
    /// collector's own key stands for; a list that extends it with more values is grouped by the default alone).
    /// Numbers in the list count as their text, like Sentry does.
    static func fingerprint(_ value: JSONValue?) -> JSONValue? {
        guard let list = value?.arrayValue, !list.isEmpty else { return nil }
        let parts = list.compactMap { item -> String? in
            item.stringValue ?? item.intValue.map(String.init) ?? item.doubleValue.map { "\($0)" }
        }
        guard parts.count == list.count,
            !parts.contains(where: { $0.replacingOccurrences(of: " ", with: "") == "{{default}}" })
        else { return nil }
        return .array(parts.map(JSONValue.string))
    }
}
