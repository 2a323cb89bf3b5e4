import CohorlyJSON
import CohorlySymbols

/// The breadcrumbs section `cohorly crashes show` prints under the crash, one line each, in the event's order (the
/// crashing task's first, then the others, each part oldest first):
/// `  2026-12-01T02:22:45.123Z  track     Checkout  {"plan":"pro"}`, a crashing task's line starting with `*` when
/// other tasks added some too. Outside text is escaped for the terminal.
struct BreadcrumbLines {
    let lines: [String]
    /// Whether the lines are marked: some are the crashing task's, some not.
    let marked: Bool

    /// Nil when the crash has no breadcrumbs (older events, or none recorded). Entries that are not objects are
    /// skipped; missing fields print as `-`.
    init?(_ value: CohorlyValue?) {
        guard let crumbs = value?.arrayValue, !crumbs.isEmpty else { return nil }
        let objects = crumbs.compactMap(\.objectValue)
        let crashingCount = objects.filter(Self.isCrashingTasks).count
        let marked = crashingCount > 0 && crashingCount < objects.count
        lines = objects.map { fields in
            let escaped = TerminalText.escaped
            var line =
                (marked && Self.isCrashingTasks(fields) ? "* " : "  ")
                + escaped(fields["timestamp"]?.stringValue ?? "-") + "  "
            line += escaped(fields["category"]?.stringValue ?? "-").padded(9) + " "
            line += escaped(fields["message"]?.stringValue ?? "")
            if case .object(var data)? = fields["data"] {
                data["$task"] = nil
                data["$crashing_task"] = nil
                if !data.isEmpty { line += "  " + escaped(CohorlyValue.object(data).jsonString) }
            }
            return line
        }
        self.marked = marked
    }

    /// Whether a breadcrumb entry is marked as the crashing task's (`crashing_task`, or `data.$crashing_task` as
    /// the Sentry wire carries it).
    static func isCrashingTasks(_ fields: [String: CohorlyValue]) -> Bool {
        fields["crashing_task"] == .bool(true) || fields["data"]?["$crashing_task"] == .bool(true)
    }

    /// The heading and the lines.
    var text: String {
        let heading =
            marked
            ? "Breadcrumbs (\(lines.count); * the crashing task's, first; each part oldest first):"
            : "Breadcrumbs (\(lines.count), oldest first):"
        return ([heading] + lines).joined(separator: "\n")
    }
}
