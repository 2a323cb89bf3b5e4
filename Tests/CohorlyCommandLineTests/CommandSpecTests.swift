import CohorlyCommandLine
import Testing

/// A command declared by its option table: parsing, the errors it gives, the nearest option suggested, the help
/// rendered from it.
@Suite struct CommandSpecTests {
    static let spec = CommandSpec(
        words: ["things", "list"], summary: "List things.",
        positionals: CommandPositionals("PATH…", count: 1...Int.max, missing: "missing PATH", areFiles: true),
        about: "What it does, as written.",
        options: [
            CommandOption("--host", .word("URL"), "The server.", default: "COHORLY_HOST, else http://127.0.0.1:4000"),
            CommandOption("--limit", .word("N"), "At most N things, the newest.", default: "100"),
            CommandOption("--level", .choice("LEVEL", ["fatal", "error"]), "Only things of this level."),
            CommandOption("--path", .directory("DIR"), "Search here (repeatable).", repeatable: true),
            CommandOption("--secret", .word("S"), "Not shown.", listed: false),
            .flag("--json", "Print JSON."),
            CommandOption("--quiet", .none, "Print nothing.", default: "print the things"),
        ],
        epilogue: "EXIT STATUS: 0 success, 2 usage error.")

    @Test func parsesFlagsOptionsAndPositionals() throws {
        let parsed = try Self.spec.parse([
            "a", "--json", "--limit", "5", "--path=x", "--path", "y", "--level", "error", "--secret", "s", "--", "--b",
        ])
        #expect(parsed.positionals == ["a", "--b"])
        #expect(parsed.flags == ["--json"])
        #expect(parsed.options["--limit"] == ["5"])
        #expect(parsed.options["--path"] == ["x", "y"])
        #expect(parsed.options["--level"] == ["error"])
        #expect(parsed.options["--secret"] == ["s"])
    }

    @Test(arguments: [
        (["a", "--limt", "5"], "unknown option '--limt' (did you mean --limit?)"),
        (["a", "--frobnicate"], "unknown option '--frobnicate'"),
        (["a", "--jsn"], "unknown option '--jsn' (did you mean --json?)"),
        (["a", "--limit"], "option '--limit' needs a value"),
        (["a", "--level", "fatl"], "invalid --level 'fatl' (expected one of: fatal, error; did you mean fatal?)"),
        (["a", "--level", "warning"], "invalid --level 'warning' (expected one of: fatal, error)"),
        (["--json"], "missing PATH"),
    ])
    func errorsSayWhatToFix(_ arguments: [String], _ reason: String) {
        #expect(throws: UsageError.self) { try Self.spec.parse(arguments) }
        do {
            _ = try Self.spec.parse(arguments)
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test func tooManyPositionalsNameTheFirstExtraOneOrSayTheCommandsWords() {
        let none = CommandSpec(words: ["serve"], summary: "", options: [], epilogue: "")
        #expect(throws: UsageError.self) { try none.parse(["extra"]) }
        do { _ = try none.parse(["extra", "more"]) } catch { #expect(error.reason == "unexpected argument 'extra'") }
        let one = CommandSpec(
            words: ["show"], summary: "",
            positionals: CommandPositionals("ID", count: 1...1, missing: "expected one ID", tooMany: "expected one ID"),
            options: [], epilogue: "")
        do { _ = try one.parse(["a", "b"]) } catch { #expect(error.reason == "expected one ID") }
        #expect((try? one.parse(["a"]))?.positionals == ["a"])
        // Help is asked before the positionals are counted: `cohorly show --help` shows help.
        #expect((try? one.parse(["--help"]))?.flags == ["--help"])
    }

    @Test func helpIsRenderedFromTheTable() {
        let help = Self.spec.help
        #expect(
            help == """
                USAGE: cohorly things list PATH… [--host URL] [--limit N] [--level LEVEL] [--path DIR]… [--json] [--quiet]

                What it does, as written.

                OPTIONS:
                  --host URL     The server (default COHORLY_HOST, else http://127.0.0.1:4000).
                  --limit N      At most N things, the newest (default 100).
                  --level LEVEL  Only things of this level.
                  --path DIR     Search here (repeatable).
                  --json         Print JSON.
                  --quiet        Print nothing (default: print the things).
                  -h, --help     Show this help.

                EXIT STATUS: 0 success, 2 usage error.
                """)
        #expect(!help.contains("--secret"))
    }

    /// A required option: usage shows it without brackets, OPTIONS says `(required)`, parsing without it is the
    /// usage error `missing <synopsis>` (after the positionals are counted; `--help` needs none), and given, it
    /// parses like any other.
    @Test func requiredOptionIsShownAndChecked() throws {
        let spec = CommandSpec(
            words: ["cache"], summary: "",
            positionals: CommandPositionals("FILE", count: 1...1, missing: "expected exactly one FILE"),
            options: [
                CommandOption("-o", .file("CACHE"), "Where to write.", required: true),
                CommandOption("--dir", .directory("DIR"), "Also here.", repeatable: true),
            ],
            epilogue: "EXIT")
        #expect(
            spec.help == """
                USAGE: cohorly cache FILE -o CACHE [--dir DIR]…

                OPTIONS:
                  -o CACHE    Where to write (required).
                  --dir DIR   Also here.
                  -h, --help  Show this help.

                EXIT
                """)
        for (arguments, reason) in [
            (["a"], "missing -o CACHE"), (["a", "--dir", "d"], "missing -o CACHE"),
            (["-o", "c"], "expected exactly one FILE"),
        ] {
            do {
                _ = try spec.parse(arguments)
                Issue.record("\(arguments) parsed")
            } catch {
                #expect(error.reason == reason, "\(arguments)")
            }
        }
        #expect(try spec.parse(["--help"]).flags == ["--help"])
        let given = try spec.parse(["a", "-o", "c"])
        #expect(given.positionals == ["a"] && given.options["-o"] == ["c"])
        #expect(try spec.parse(["a", "-o=c"]).options["-o"] == ["c"])
    }

    @Test func longUsageAndHelpLinesWrapUnderTheirColumn() throws {
        let long = String(repeating: "word ", count: 40) + "end."
        let spec = CommandSpec(
            words: ["serve"], summary: "",
            options: (1...12).map { CommandOption("--option-\($0)", .word("VALUE"), long) }, epilogue: "EXIT")
        let lines = spec.help.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.allSatisfy { $0.count <= CommandSpec.helpWidth }, "\(spec.help)")
        // Usage continues under the first option, after `USAGE: cohorly serve `.
        #expect(lines[0].hasPrefix("USAGE: cohorly serve [--option-1 VALUE]"))
        #expect(lines[1].hasPrefix(String(repeating: " ", count: 21) + "[--option-"))
        // A description continues in its column.
        let first = try #require(lines.firstIndex { $0.hasPrefix("  --option-1 VALUE ") })
        let line = lines[first]
        let column = line.distance(from: line.startIndex, to: try #require(line.firstRange(of: "word")).lowerBound)
        #expect(lines[first + 1].hasPrefix(String(repeating: " ", count: column) + "word"))
    }
}
