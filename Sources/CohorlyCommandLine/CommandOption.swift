/// One option of a command, declared once: its help line, the parser, "did you mean" and shell completion all
/// read this declaration (``CommandSpec``).
package struct CommandOption: Sendable {
    /// What follows the option's name on the command line.
    package enum Value: Sendable, Equatable {
        /// Nothing: the option is a flag.
        case none
        /// A word, shown in help as its placeholder (`URL`, `N`).
        case word(String)
        /// A file's path (completion offers files), shown as its placeholder.
        case file(String)
        /// A directory's path (completion offers directories), shown as its placeholder.
        case directory(String)
        /// One of `values`, shown as its placeholder; any other value is a usage error that lists them.
        case choice(String, [String])

        /// The placeholder help shows after the name; nil for a flag.
        package var placeholder: String? {
            switch self {
            case .none: nil
            case .word(let placeholder), .file(let placeholder), .directory(let placeholder),
                .choice(let placeholder, _):
                placeholder
            }
        }
    }

    /// The name with its dashes, e.g. `--host`.
    package let name: String
    /// What the option takes.
    package let value: Value
    /// One sentence (or a few) for the help's OPTIONS list, ending with a full stop; the default is added to it.
    package let help: String
    /// What applies when the option is not given, as help says it (`1000`, `COHORLY_HOST, else …`); nil when
    /// nothing does.
    package let defaultValue: String?
    /// Whether the option may be given more than once (usage shows `…`); otherwise the last one wins.
    package let repeatable: Bool
    /// Whether usage and OPTIONS show it; an unlisted option is still parsed and completed.
    package let listed: Bool
    /// Whether the command needs it: usage shows it without brackets, OPTIONS says `(required)`, and parsing
    /// without it is the usage error `missing <synopsis>` (`missing -o CACHE`).
    package let required: Bool

    /// An option that takes `value`; `defaultValue` is what applies without it (nil: nothing). A `required`
    /// option has no default.
    package init(
        _ name: String, _ value: Value, _ help: String, default defaultValue: String? = nil,
        repeatable: Bool = false, listed: Bool = true, required: Bool = false
    ) {
        self.name = name
        self.value = value
        self.help = help
        self.defaultValue = defaultValue
        self.repeatable = repeatable
        self.listed = listed
        self.required = required
    }

    /// A flag: an option without a value (off unless given).
    package static func flag(_ name: String, _ help: String, listed: Bool = true) -> CommandOption {
        CommandOption(name, .none, help, listed: listed)
    }

    /// The name and placeholder as usage and OPTIONS show them: `--host URL`, `--json`.
    package var synopsis: String { value.placeholder.map { name + " " + $0 } ?? name }

    /// The help sentence with its default: `The collector (default COHORLY_HOST, else http://127.0.0.1:4000).`; a
    /// flag's default, which says what happens without it, after a colon: `(default: the refused ones)`; a
    /// required option's `(required)`.
    package var helpWithDefault: String {
        let sentence = help.hasSuffix(".") ? String(help.dropLast()) : help
        if required { return sentence + " (required)." }
        guard let defaultValue else { return help }
        return sentence + (value == .none ? " (default: " : " (default ") + defaultValue + ")."
    }
}

/// The positional arguments of a command: how usage names them, how many are allowed, what completes them.
package struct CommandPositionals: Sendable {
    /// How usage names them (`KEY`, `PATH…`); empty when the command takes none.
    package let usage: String
    /// How many are allowed.
    package let count: ClosedRange<Int>
    /// The usage error when fewer are given (`missing PATH`).
    package let missing: String
    /// The usage error when more are given; nil: `unexpected argument 'X'` naming the first one too many.
    package let tooMany: String?
    /// Whether completion offers files for them.
    package let areFiles: Bool

    /// Positionals named `usage`, `count` of them.
    package init(
        _ usage: String, count: ClosedRange<Int>, missing: String, tooMany: String? = nil, areFiles: Bool = false
    ) {
        self.usage = usage
        self.count = count
        self.missing = missing
        self.tooMany = tooMany
        self.areFiles = areFiles
    }

    /// No positional argument.
    package static let none = CommandPositionals("", count: 0...0, missing: "")
}
