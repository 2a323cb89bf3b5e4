import CohorlyCommandLine

/// `cohorly completion bash`: prints a bash completion script written from the commands' option tables.
enum CompletionCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["completion"], summary: "Print a bash completion script for cohorly's commands and options.",
        positionals: CommandPositionals("SHELL", count: 1...1, missing: "missing SHELL (expected: bash)"),
        about: """
            Completes the command words, the options of every command, the values of an option that takes one of a
            few (crashes list --level), and files or directories where an option takes them. Load it in the current
            shell with `source <(cohorly completion bash)`, or for every shell with
            `cohorly completion bash > /etc/bash_completion.d/cohorly`.
            """,
        options: [],
        epilogue: "EXIT STATUS: 0 success, 2 usage error (including a shell other than bash).")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        guard parsed.positionals[0] == "bash" else {
            return spec.usageError("unknown shell '\(parsed.positionals[0])' (expected: bash)")
        }
        // Commands run on the main thread, where main.swift's command list lives.
        let declared = MainActor.assumeIsolated {
            commands.map { command in (command.words, (command as? any DeclaredCommand.Type)?.spec) }
        }
        Console.write(CompletionScript.bash(program: "cohorly", commands: declared))
        return .success
    }
}
