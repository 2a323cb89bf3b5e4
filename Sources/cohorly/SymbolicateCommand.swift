import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

/// `cohorly symbolicate REPORT.json [--debug-dir DIR]… [--json]` and
/// `cohorly symbolicate --exe FILE [ADDR…]`.
enum SymbolicateCommand: Command {
    static let words = ["symbolicate"]
    static let summary =
        "Turn a crash report's (or an executable's) addresses into functions and lines."
    static let help = """
        USAGE: cohorly symbolicate REPORT.json|EVENTS.json [--debug-dir DIR]… [--full-names] [--json]
               cohorly symbolicate --exe FILE [--debug-dir DIR]… [--simplified] [--json] [ADDR…]

        With a crash report (format cohorly-crash/1; `-` reads it from standard input): prints the crash
        reason, then every thread's frames as `#N 0xADDR module function at file:line:col`, inlined frames
        indented under their frame, names simplified as the Swift backtracer prints them (`crash(on:_:)`).
        Debug files are looked for next to each module, via .gnu_debuglink, in --debug-dir directories, in
        /usr/lib/debug and on the servers in DEBUGINFOD_URLS. Modules left unsymbolicated are listed.

        The file may also hold `$exception` events instead of a report (told apart automatically): one event,
        its bare properties, an array of events, or `cohorly events list --json` output (`events`) or PostHog's
        (`results`). Each is symbolicated and printed the same way (a list: one after another; --json: an array).

        With --exe: symbolicates file-relative virtual addresses of FILE (the addresses llvm-symbolizer's
        --obj takes), given as arguments or one per line on stdin. Frame 0 semantics: no -1 adjustment.
        Output per address: the address, then `function` and `file:line:col` per frame, innermost first.

        OPTIONS:
          --exe FILE        Symbolicate addresses of this ELF file instead of a report.
          --debug-dir DIR   Also look for debug files here (recursive; repeatable; must exist).
          --full-names      Full names (`CrashDemo.crash(on: Swift.String, …) -> Swift.Never`) in text output;
                            the default for --exe, and always in --json (`function`; `raw_function` mangled).
          --simplified      Simplified names (`crash(on:_:)`, `Int?`, `[A]`); the default for a report.
          --json            Print JSON instead of text.
          -h, --help        Show this help.

        EXIT STATUS: 0 success (a report was read, even if some modules stay unsymbolicated; with --exe, every
        address was resolved), 1 some input failed (unreadable report or file, unresolved address), 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json", "--full-names", "--simplified"], options: ["--exe", "--debug-dir"])
        } catch {
            return Console.usageError(error.reason, command: "symbolicate")
        }
        let json = parsed.flags.contains("--json")
        let debugDirs = parsed.options["--debug-dir"] ?? []
        if let missing = DirectoryArguments.firstMissing(debugDirs) {
            return Console.usageError("--debug-dir \(missing): no such directory", command: "symbolicate")
        }
        if parsed.flags.contains("--full-names") && parsed.flags.contains("--simplified") {
            return Console.usageError("--full-names and --simplified exclude each other", command: "symbolicate")
        }
        if let executables = parsed.options["--exe"] {
            guard executables.count == 1, let executable = executables.first else {
                return Console.usageError("--exe takes exactly one file", command: "symbolicate")
            }
            let input: SymbolicateExecutable.Input =
                parsed.positionals.isEmpty ? .descriptor(STDIN_FILENO) : .arguments(parsed.positionals)
            let names: Demangler.Style = parsed.flags.contains("--simplified") ? .simplified : .full
            return SymbolicateExecutable.run(
                executable: executable, input: input, debugDirs: debugDirs, json: json, names: names)
        }
        guard parsed.positionals.count == 1, let report = parsed.positionals.first else {
            let reason =
                parsed.positionals.isEmpty
                ? "missing REPORT.json (or --exe FILE)" : "expected one REPORT.json"
            return Console.usageError(reason, command: "symbolicate")
        }
        let names: Demangler.Style = parsed.flags.contains("--full-names") ? .full : .simplified
        return SymbolicateReport.run(path: report, debugDirs: debugDirs, json: json, names: names)
    }
}
