import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

/// The arguments of `cohorly symbolicate`, parsed and checked once for both of its modes (a report, or `--exe`)
/// and for `cohorly-symbolicate`, the lean executable that takes over `--exe`.
package struct SymbolicateOptions {
    /// `--exe FILE`: the ELF file whose addresses are given (nil: a report is symbolicated).
    package var executable: String?
    /// Addresses (with `--exe`) or the report's path.
    package var positionals: [String]
    /// `--debug-dir DIR`, each checked to exist.
    package var debugDirs: [String]
    /// `--json`.
    package var json: Bool
    /// `--no-sugar` (or `--full-names`) / `--simplified`; nil when neither was given (each mode has its own
    /// default).
    package var names: Demangler.Style?
    /// `--no-async`: the raw physical stacks, without the async callers.
    package var noAsync: Bool = false
    /// `--cache CACHE` (with `--exe` only): the symbol cache answering for the file.
    package var cache: String?

    /// Parses (``spec``) and checks `arguments` (those after `symbolicate`).
    package static func parse(_ arguments: [String]) throws(UsageError) -> SymbolicateOptions {
        let parsed = try spec.parse(arguments)
        let debugDirs = parsed.options["--debug-dir"] ?? []
        if let missing = DirectoryArguments.firstMissing(debugDirs) {
            throw UsageError(reason: "--debug-dir \(missing): no such directory")
        }
        let names = try NamingFlags.style(parsed)
        var executable: String?
        if let executables = parsed.options["--exe"] {
            guard executables.count == 1, let only = executables.first else {
                throw UsageError(reason: "--exe takes exactly one file")
            }
            executable = only
        }
        var cache: String?
        if let caches = parsed.options["--cache"] {
            guard caches.count == 1, let only = caches.first, executable != nil else {
                throw UsageError(reason: "--cache takes exactly one file, with --exe")
            }
            cache = only
        }
        return SymbolicateOptions(
            executable: executable, positionals: parsed.positionals, debugDirs: debugDirs,
            json: parsed.flags.contains("--json"), names: names, noAsync: parsed.flags.contains("--no-async"),
            cache: cache)
    }

    /// `--exe` mode with these options: the addresses from the arguments, or from standard input when there are
    /// none; full names unless `--simplified`.
    package func runExecutable(_ executable: String) -> ExitStatus {
        let input: SymbolicateExecutable.Input =
            positionals.isEmpty ? .descriptor(STDIN_FILENO) : .arguments(positionals)
        return SymbolicateExecutable.run(
            executable: executable, input: input, debugDirs: debugDirs, json: json, names: names ?? .full,
            cache: cache)
    }

    /// The declaration of `cohorly symbolicate` (and of `cohorly-symbolicate`, which takes the same arguments):
    /// its help, parser and completion.
    package static let spec = CommandSpec(
        words: ["symbolicate"],
        summary: "Turn a crash report's (or an executable's) addresses into functions and lines.",
        positionals: CommandPositionals(
            "REPORT.json|EVENTS.json|ADDR…", count: 0...Int.max, missing: "missing REPORT.json (or --exe FILE)",
            areFiles: true),
        about: """
            Two modes: `cohorly symbolicate REPORT.json|EVENTS.json` and `cohorly symbolicate --exe FILE [ADDR…]`.

            With a crash report (format cohorly-crash/1 or /2; `-` reads it from standard input): prints the crash
            reason, then every thread's frames as `#N 0xADDR module function at file:line:col`, inlined frames
            indented under their frame, every name simplified as the Swift backtracer prints it (`crash(on:_:)`), a
            file only where a line is known (not a compile unit's name: `crtstuff.c`, `Swift.o`).
            Debug files are looked for next to each module, via .gnu_debuglink, in --debug-dir directories, in
            /usr/lib/debug and on the servers in DEBUGINFOD_URLS. Modules left unsymbolicated are listed.

            The file may also hold `$exception` events instead of a report (told apart automatically): one event,
            its bare properties, an array of events, or `cohorly events list --json` output (`events`) or PostHog's
            (`results`). Each is symbolicated and printed the same way (a list: one after another; --json: an array).

            With --exe: symbolicates file-relative virtual addresses of FILE (the addresses llvm-symbolizer's
            --obj takes), given as arguments or one per line on stdin. Frame 0 semantics: no -1 adjustment.
            Output per address: the address, then `function` and `file:line:col` per frame, innermost first.
            The work is done by `cohorly-symbolicate` when it sits beside `cohorly` (built with it): the same
            code in a lean executable without Foundation, so a long run holds less memory.
            """,
        options: [
            CommandOption("--exe", .file("FILE"), "Symbolicate addresses of this ELF file instead of a report."),
            CommandOption(
                "--cache", .file("CACHE"),
                "With --exe: answer from this symbol cache (`cohorly debug-files cache FILE -o CACHE`; refused unless"
                    + " made for FILE's build id), not from FILE's DWARF."),
            CommandOption(
                "--debug-dir", .directory("DIR"), "Also look for debug files here (recursive; repeatable; must exist).",
                repeatable: true),
            .flag(
                "--no-sugar",
                "Full names (`CrashDemo.crash(on: Swift.String, …) -> Swift.Never`, as swift-demangle --no-sugar"
                    + " prints them) for every frame of the text; the default for --exe, and always in --json"
                    + " (`function`; `raw_function` mangled). --full-names is the same."),
            .flag("--full-names", "Full names, as --no-sugar.", listed: false),
            .flag(
                "--simplified",
                "Simplified names (`crash(on:_:)`, `Int?`, `[A]`, as swift-demangle --simplified); the default for a"
                    + " report."),
            .flag(
                "--no-async",
                "The raw physical stacks: without the `[async]` callers a crash in async code lists after the frame"
                    + " they continue from, and with the executor's frames it folds."),
            .flag("--json", "Print JSON instead of text."),
        ],
        epilogue: """
            EXIT STATUS: 0 success (a report was read, even if some modules stay unsymbolicated; with --exe, every
            address was resolved), 1 some input failed (unreadable report or file, unresolved address), 2 usage error.
            """)
}
