/// A command's declaration: its words, positionals and option table, from which its help is rendered, its
/// arguments parsed (unknown options answered with the nearest known one) and its shell completion written.
package struct CommandSpec: Sendable {
    /// The words that select the command, e.g. `["debug-files", "check"]`.
    package let words: [String]
    /// One line for `cohorly --help`.
    package let summary: String
    /// The positional arguments.
    package let positionals: CommandPositionals
    /// What the command does: the paragraphs between USAGE and OPTIONS, as written (nil: none).
    package let about: String?
    /// The options, in the order help lists them (`-h, --help` is implied).
    package let options: [CommandOption]
    /// What follows OPTIONS, as written: at least the EXIT STATUS line.
    package let epilogue: String

    /// A command's declaration.
    package init(
        words: [String], summary: String, positionals: CommandPositionals = .none, about: String? = nil,
        options: [CommandOption], epilogue: String
    ) {
        self.words = words
        self.summary = summary
        self.positionals = positionals
        self.about = about
        self.options = options
        self.epilogue = epilogue
    }

    /// The command's words as one string, e.g. `debug-files check` (usage errors name it).
    package var name: String { words.joined(separator: " ") }

    /// Parses `arguments` (the words after the command's): the options the table declares (a flag takes no
    /// value, an option one; `-h`/`--help` is always the flag `--help`), each choice checked against its values,
    /// the number of positionals checked, then every required option present (`missing -o CACHE`). Errors are
    /// usage errors whose reason says what to fix.
    package func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        let flags = Set(options.filter { $0.value == .none }.map(\.name))
        let valued = Set(options.filter { $0.value != .none }.map(\.name))
        let parsed = try ParsedArguments.parse(arguments, flags: flags, options: valued)
        for option in options {
            if case .choice(_, let values) = option.value { _ = try parsed.choice(option.name, among: values) }
        }
        if parsed.flags.contains("--help") { return parsed }
        let count = parsed.positionals.count
        if count < positionals.count.lowerBound { throw UsageError(reason: positionals.missing) }
        if count > positionals.count.upperBound {
            throw UsageError(
                reason: positionals.tooMany
                    ?? "unexpected argument '\(parsed.positionals[positionals.count.upperBound])'")
        }
        if let missing = options.first(where: { $0.required && parsed.options[$0.name] == nil }) {
            throw UsageError(reason: "missing " + missing.synopsis)
        }
        return parsed
    }

    /// ``parse(_:)``, a usage error printed (`cohorly: <reason>` and the usage hint) and nil instead of throwing.
    package func parseOrReport(_ arguments: [String]) -> ParsedArguments? {
        do {
            return try parse(arguments)
        } catch {
            _ = usageError(error.reason)
            return nil
        }
    }

    /// Prints `cohorly: <reason>` and the hint to this command's help; the usage exit status.
    package func usageError(_ reason: String) -> ExitStatus {
        Console.usageError(reason, command: name)
    }
}
