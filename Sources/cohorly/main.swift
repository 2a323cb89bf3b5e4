// `cohorly`: the Cohorly command-line tool. This file only dispatches: each subcommand lives in its own file
// (`<Name>Command.swift`) and is listed once below.
import CohorlyCommandLine
#if canImport(Glibc)
    import Glibc
#endif

let version = "0.1.0"

let commands: [any Command.Type] = [
    DebugFilesCheckCommand.self,
    DebugFilesFindCommand.self,
    DebugFilesUploadCommand.self,
    DebugFilesCacheCommand.self,
    SymbolicateCommand.self,
    ServeCommand.self,
    EventsListCommand.self,
    CrashesListCommand.self,
    CrashesShowCommand.self,
    IssuesListCommand.self,
    IssuesShowCommand.self,
    IssuesResolveCommand.self,
    IssuesReopenCommand.self,
    IssuesMuteCommand.self,
    SessionsListCommand.self,
    FlagsSetCommand.self,
    FlagsListCommand.self,
    FlagsShowCommand.self,
    FlagsDeleteCommand.self,
    CompletionCommand.self,
]

@MainActor func topLevelHelp() -> String {
    var text = """
        cohorly \(version): crash symbolication, debug files and the local collector for Linux Swift apps.

        USAGE: cohorly <command> [options]

        COMMANDS:

        """
    for command in commands {
        let name = command.words.joined(separator: " ")
        text += "  " + name + String(repeating: " ", count: max(2, 24 - name.count))
        text += command.summary + "\n"
    }
    text += """

        OPTIONS:
          -h, --help              Show help (also: cohorly <command> --help, cohorly help <command>).
          --version               Show the version.

        ENVIRONMENT: COHORLY_HOST, COHORLY_TOKEN, COHORLY_AUTH_TOKEN, DEBUGINFOD_URLS, COHORLY_DEBUGINFOD_TIMEOUT

        EXIT STATUS:
          0  success
          1  some input failed (unreadable file, id or address not found, …)
          2  usage error
        """
    return text
}

@MainActor func dispatch(_ arguments: [String]) -> ExitStatus {
    guard let first = arguments.first else {
        Console.error(topLevelHelp())
        return .usage
    }
    if first == "help" && arguments.count > 1 {
        // `cohorly help COMMAND…` is `cohorly COMMAND… --help`.
        return dispatch(Array(arguments.dropFirst()) + ["--help"])
    }
    if first == "--help" || first == "-h" || first == "help" {
        Console.out(topLevelHelp())
        return .success
    }
    if first == "--version" {
        Console.out("cohorly \(version)")
        return .success
    }
    // The longest matching word sequence wins (`debug-files check` before `debug-files`).
    let matching = commands.filter { Array(arguments.prefix($0.words.count)) == $0.words }
    if let command = matching.max(by: { $0.words.count < $1.words.count }) {
        let rest = Array(arguments.dropFirst(command.words.count))
        if rest.contains("--help") || rest.contains("-h") {
            Console.out(command.help)
            return .success
        }
        return command.run(rest)
    }
    let group = commands.filter { $0.words.first == first }
    if !group.isEmpty {
        if arguments.count == 1 || arguments[1] == "--help" || arguments[1] == "-h" {
            Console.out(
                group.map { "cohorly " + $0.words.joined(separator: " ") + ": " + $0.summary }.joined(
                    separator: "\n"))
            return arguments.count == 1 ? .usage : .success
        }
        let names = group.map { $0.words.dropFirst().joined(separator: " ") }
        let hint = Suggestion.closest(to: arguments[1], among: names).map { "; did you mean \($0)?" } ?? ""
        Console.error(
            "cohorly: unknown \(first) command '\(arguments[1])' (expected one of: \(names.joined(separator: ", "))\(hint))"
        )
        Console.error("Run 'cohorly --help' for usage.")
        return .usage
    }
    var words: [String] = []
    for command in commands where !words.contains(command.words[0]) { words.append(command.words[0]) }
    let hint = Suggestion.closest(to: first, among: words + ["help"]).map { " (did you mean \($0)?)" } ?? ""
    Console.error("cohorly: unknown command '\(first)'" + hint)
    Console.error("Run 'cohorly --help' for usage.")
    return .usage
}

exit(dispatch(Array(CommandLine.arguments.dropFirst())).rawValue)
