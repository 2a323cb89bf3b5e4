import CohorlyJSON
import CohorlySymbols

/// The breadcrumbs section `cohorly crashes show` prints under the crash, one line each, oldest first:
/// `  2026-12-01T02:22:45.123Z  track     Checkout  {"plan":"pro"}`. Outside text is escaped for the terminal.
struct BreadcrumbLines {
    let lines: [String]

    /// Nil when the crash has no breadcrumbs (older events, or none recorded). Entries that are not objects are
    /// skipped; missing fields print as `-`.
    init?(_ value: CohorlyValue?) {
        guard let crumbs = value?.arrayValue, !crumbs.isEmpty else { return nil }
        lines = crumbs.compactMap { crumb in
            guard case .object(let fields) = crumb else { return nil }
            let escaped = TerminalText.escaped
            var line = "  " + escaped(fields["timestamp"]?.stringValue ?? "-") + "  "
            line += escaped(fields["category"]?.stringValue ?? "-").padded(9) + " "
            line += escaped(fields["message"]?.stringValue ?? "")
            if case .object(let data)? = fields["data"], !data.isEmpty {
                line += "  " + escaped(CohorlyValue.object(data).jsonString)
            }
            return line
        }
    }

    /// The heading and the lines.
    var text: String {
        (["Breadcrumbs (\(lines.count), oldest first):"] + lines).joined(separator: "\n")
    }
}
