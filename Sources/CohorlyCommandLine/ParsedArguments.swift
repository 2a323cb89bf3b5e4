/// A command-line mistake: printed as `cohorly: <reason>` plus a usage hint, exit status 2.
package struct UsageError: Error {
    package let reason: String

    package init(reason: String) { self.reason = reason }
}

/// Parsed arguments of one command: positionals, boolean flags and repeatable valued options.
package struct ParsedArguments {
    package var positionals: [String] = []
    package var flags: Set<String> = []
    package var options: [String: [String]] = [:]

    /// Parses `--flag`, `--option VALUE`, `--option=VALUE` and positionals (`--` ends the options).
    /// `-h`/`--help` is always accepted as the flag `--help`. Anything else starting with `-` is an error.
    /// Internal: commands parse through their option table (``CommandSpec/parse(_:)``), never by hand.
    static func parse(_ arguments: [String], flags: Set<String>, options: Set<String>)
        throws(UsageError)
        -> ParsedArguments
    {
        var result = ParsedArguments()
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositionals || !argument.hasPrefix("-") || argument == "-" {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }
            if argument == "-h" || argument == "--help" {
                result.flags.insert("--help")
                continue
            }
            var name = argument
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if flags.contains(name) && inlineValue == nil {
                result.flags.insert(name)
            } else if options.contains(name) {
                if let inlineValue {
                    result.options[name, default: []].append(inlineValue)
                } else if index < arguments.count {
                    result.options[name, default: []].append(arguments[index])
                    index += 1
                } else {
                    throw UsageError(reason: "option '\(name)' needs a value")
                }
            } else {
                let known = flags.union(options).union(["--help"]).sorted()
                let hint = Suggestion.closest(to: name, among: known).map { " (did you mean \($0)?)" } ?? ""
                throw UsageError(reason: "unknown option '\(name)'" + hint)
            }
        }
        return result
    }

    /// The last value of option `name`, which must be one of `values`; nil when the option is not given. Another
    /// value is a usage error that lists the valid ones (and the nearest, when it looks like a typo).
    package func choice(_ name: String, among values: [String]) throws(UsageError) -> String? {
        guard let value = options[name]?.last else { return nil }
        guard values.contains(value) else {
            let hint = Suggestion.closest(to: value, among: values).map { "; did you mean \($0)?" } ?? ""
            let expected = values.joined(separator: ", ")
            throw UsageError(reason: "invalid \(name) '\(value)' (expected one of: \(expected)\(hint))")
        }
        return value
    }
}
