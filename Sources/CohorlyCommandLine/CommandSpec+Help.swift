extension CommandSpec {
    /// The widest line help writes (usage and option lines are wrapped to it; `about` and `epilogue` are as
    /// written): 116 characters.
    package static let helpWidth = 116

    /// `cohorly <command> --help`: USAGE (every listed option, wrapped under the command's words), `about`,
    /// OPTIONS (one entry per listed option with its default, then `-h, --help`) and `epilogue`.
    package var help: String {
        var text = usage + "\n\n"
        if let about { text += about + "\n\n" }
        text += "OPTIONS:\n"
        let listed = options.filter(\.listed)
        let entries = listed.map { ($0.synopsis, $0.helpWithDefault) } + [("-h, --help", "Show this help.")]
        // Descriptions start in one column, two spaces after the longest synopsis.
        let column = 2 + (entries.map(\.0.count).max() ?? 0) + 2
        for (synopsis, description) in entries {
            let lead = "  " + synopsis + String(repeating: " ", count: column - 2 - synopsis.count)
            text += Self.wrap(description, first: lead, rest: String(repeating: " ", count: column)) + "\n"
        }
        return text + "\n" + epilogue
    }

    /// `USAGE: cohorly <words> <positionals> [--option VALUE]… …` (a required option without brackets), wrapped
    /// with continuation lines aligned after the command's words.
    package var usage: String {
        let lead = "USAGE: cohorly " + name + " "
        var items = positionals.usage.isEmpty ? [] : [positionals.usage]
        items += options.filter(\.listed).map { option in
            (option.required ? option.synopsis : "[" + option.synopsis + "]") + (option.repeatable ? "…" : "")
        }
        return Self.wrap(items.joined(separator: " "), first: lead, rest: String(repeating: " ", count: lead.count))
    }

    /// `text` broken at spaces into lines of at most ``helpWidth`` characters (a longer word stands alone), the
    /// first line starting with `first`, the others with `rest`.
    static func wrap(_ text: String, first: String, rest: String) -> String {
        var lines: [String] = []
        var line = first
        var lineHasWord = false
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if lineHasWord && line.count + 1 + word.count > helpWidth {
                lines.append(line)
                line = rest
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
