import Testing

@Suite struct HelpTests {
    @Test func versionAndHelp() throws {
        let version = try CLI.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("cohorly "))
        let help = try CLI.run(["--help"])
        #expect(help.status == 0)
        for command in ["debug-files check", "debug-files find", "symbolicate"] {
            #expect(help.stdout.contains(command))
        }
        #expect(help.stdout.contains("EXIT STATUS"))
    }

    @Test(arguments: [["debug-files", "check"], ["debug-files", "find"], ["symbolicate"]])
    func commandHelp(_ words: [String]) throws {
        let result = try CLI.run(words + ["--help"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("USAGE: cohorly " + words.joined(separator: " ")))
    }

    /// `debug-files cache` from its option table: `-o` is required, so usage shows it without brackets and
    /// OPTIONS says so.
    @Test func symbolCacheHelpShowsTheRequiredOutput() throws {
        let result = try CLI.run(["debug-files", "cache", "--help"])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("USAGE: cohorly debug-files cache FILE -o CACHE [--debug-dir DIR]…\n"))
        #expect(result.stdout.contains("  -o CACHE  ") && result.stdout.contains("then renamed (required)."))
        #expect(result.stdout.contains("--debug-dir DIR") && result.stdout.contains("-h, --help"))
        #expect(result.stdout.hasSuffix("CACHE not writable, 2 usage error.\n"))
    }

    @Test(arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["debug-files", "zap"], "unknown debug-files command 'zap'"),
        (["symbolicate", "--bogus"], "unknown option '--bogus'"),
        (["symbolicate"], "missing REPORT.json"),
        (["symbolicate", "--exe"], "option '--exe' needs a value"),
        (["debug-files", "check", "--json", "--frob"], "unknown option '--frob'"),
        (["debug-files", "check"], "missing PATH"),
        (["debug-files", "find"], "missing ID"),
        (["debug-files", "cache", "a.out"], "missing -o CACHE"),
        (["debug-files", "cache", "-o", "a.cache"], "expected exactly one FILE"),
        (["debug-files", "cache", "a.out", "b.out", "-o", "a.cache"], "expected exactly one FILE"),
        (["debug-files", "cache", "a.out", "-o"], "option '-o' needs a value"),
        (
            ["debug-files", "cache", "a.out", "-o", "a.cache", "--debug-dr", "d"],
            "unknown option '--debug-dr' (did you mean --debug-dir?)"
        ),
    ])
    func usageErrors(_ arguments: [String], _ reason: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains("cohorly: " + reason), "\(result.stderr)")
        #expect(result.stderr.contains("--help"))
    }
}
