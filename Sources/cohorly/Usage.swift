import Foundation

/// Usage text and the shared error path of the CLI.
enum Usage {
    static let text = """
        usage: cohorly <command> [options]

          serve [--port P] [--bind ADDR] [--data DIR] [--token T]… [--auth-token S] [--rate-limit N/SECONDS]
                                       run the local collector (port 0 picks one and prints it)
          events list [--host URL] [--event NAME] [--distinct-id ID] [--limit N] [--json]
                                       list events stored by a collector

        environment: COHORLY_HOST, COHORLY_TOKEN, COHORLY_AUTH_TOKEN
        exit status: 0 success, 1 a request or input failed, 2 usage error
        """

    /// Prints `cohorly: <reason>` and a usage hint, exits 2.
    static func fail(_ reason: String) -> Never {
        FileHandle.standardError.write(
            Data("cohorly: \(reason)\nRun 'cohorly --help' for usage.\n".utf8))
        exit(2)
    }

    /// Prints `cohorly: <reason>` (no usage hint) and returns exit status 1.
    static func failure(_ reason: String) -> Int32 {
        FileHandle.standardError.write(Data("cohorly: \(reason)\n".utf8))
        return 1
    }
}

/// A minimal option scanner: `--name value` pairs, repeatable options and flags.
struct OptionScanner {
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positional: [String] = []

    init(_ arguments: [String], options: Set<String>, flags knownFlags: Set<String>) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if knownFlags.contains(argument) {
                flags.insert(argument)
            } else if options.contains(argument) {
                guard index + 1 < arguments.count else { Usage.fail("\(argument) needs a value") }
                values[argument, default: []].append(arguments[index + 1])
                index += 1
            } else if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "="),
                options.contains(String(argument[..<equals]))
            {
                values[String(argument[..<equals]), default: []].append(
                    String(argument[argument.index(after: equals)...]))
            } else if argument.hasPrefix("-") {
                Usage.fail("unknown option \(argument)")
            } else {
                positional.append(argument)
            }
            index += 1
        }
    }

    func value(_ name: String) -> String? { values[name]?.last }
}
