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

    @Test(arguments: [
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["debug-files", "zap"], "unknown debug-files command 'zap'"),
        (["symbolicate", "--bogus"], "unknown option '--bogus'"),
        (["symbolicate"], "missing REPORT.json"),
        (["symbolicate", "--exe"], "option '--exe' needs a value"),
        (["debug-files", "check", "--json", "--frob"], "unknown option '--frob'"),
        (["debug-files", "check"], "missing PATH"),
        (["debug-files", "find"], "missing ID"),
    ])
    func usageErrors(_ arguments: [String], _ reason: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains("cohorly: " + reason), "\(result.stderr)")
        #expect(result.stderr.contains("--help"))
    }
}
