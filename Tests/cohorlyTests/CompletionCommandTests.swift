import Foundation
import Testing

/// `cohorly completion bash`: the script the CLI prints from its commands' option tables, run by bash.
@Suite struct CompletionCommandTests {
    /// What bash offers for `cohorly WORDS…` (the last word being completed) with the CLI's own script.
    static func offers(_ words: [String], script: String) throws -> [String] {
        let quoted = (["cohorly"] + words).map { "'" + $0 + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "--norc", "-c",
            script
                + "\nCOMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count); _cohorly; printf '%s\\n' \"${COMPREPLY[@]}\"",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).sorted()
    }

    @Test func theScriptCompletesCommandsOptionsAndChoices() throws {
        let result = try CLI.run(["completion", "bash"])
        #expect(result.status == 0)
        let script = result.stdout
        #expect(try Self.offers(["crashes", ""], script: script) == ["list", "show"])
        #expect(try Self.offers(["crashes", "list", "--l"], script: script) == ["--level", "--limit"])
        #expect(try Self.offers(["crashes", "list", "--level", ""], script: script) == ["error", "fatal"])
        #expect(try Self.offers(["serve", "--web"], script: script) == ["--web-actions"])
        #expect(try Self.offers(["debug-files", "find", "--p"], script: script) == ["--path"])
        #expect(try Self.offers(["co"], script: script) == ["completion"])
        #expect(try Self.offers(["debug-files", "upload", "--m"], script: script) == ["--max-wait"])
        #expect(
            try Self.offers(["debug-files", "upload", "--a"], script: script) == [
                "--allow-empty", "--api-key", "--api-key-file", "--auth-token", "--auth-token-file",
            ])
    }

    /// `symbolicate` and the issue commands complete from their tables: options, a choice's values, files.
    @Test func theScriptCompletesSymbolicateAndTheIssueCommands() throws {
        let script = try CLI.run(["completion", "bash"]).stdout
        #expect(try Self.offers(["symbolicate", "--no-"], script: script) == ["--no-async", "--no-sugar"])
        #expect(try Self.offers(["symbolicate", "--c"], script: script) == ["--cache"])
        #expect(try Self.offers(["issues", "list", "--s"], script: script) == ["--since", "--sort", "--state"])
        #expect(
            try Self.offers(["issues", "list", "--state", ""], script: script) == [
                "muted", "open", "regressed", "resolved",
            ])
        #expect(
            try Self.offers(["issues", "list", "--sort", ""], script: script) == ["last-seen", "occurrences", "users"])
        #expect(
            try Self.offers(["issues", "show", "--a"], script: script) == [
                "--all-frames", "--auth-token", "--auth-token-file",
            ])
        #expect(try Self.offers(["issues", "mute", "--"], script: script).contains("--occurrences"))
        #expect(try Self.offers(["issues", "resolve", "--i"], script: script) == ["--in-release"])
    }

    @Test func anotherShellIsAUsageError() throws {
        let result = try CLI.run(["completion", "zsh"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("cohorly: unknown shell 'zsh' (expected: bash)\n"), "\(result.stderr)")
    }

    /// Every declared command's help comes from its table: its options are listed with their placeholders.
    @Test(arguments: [
        (["serve"], ["--port P", "--debug-dir DIR", "--web-actions", "(default 4000)"]),
        (["crashes", "list"], ["--level LEVEL", "--limit N", "(default 100)", "--auth-token-file F"]),
        (["flags", "set"], ["USAGE: cohorly flags set KEY [--rollout PCT]", "[--variant NAME:PCT]…"]),
        (["debug-files", "find"], ["USAGE: cohorly debug-files find ID… [--path DIR]… [--json]"]),
        (
            ["symbolicate"],
            [
                "USAGE: cohorly symbolicate REPORT.json|EVENTS.json|ADDR… [--exe FILE] [--cache CACHE]",
                "[--debug-dir DIR]…",
            ]
        ),
        (["issues", "list"], ["[--state S]", "--sort ORDER", "(default last-seen)", "(default 100)"]),
        (["issues", "show"], ["USAGE: cohorly issues show ID [--host URL] [--auth-token-file F]", "--all-frames"]),
        (["issues", "mute"], ["USAGE: cohorly issues mute ID [--until DATE] [--occurrences N]"]),
        (
            ["debug-files", "upload"],
            ["USAGE: cohorly debug-files upload PATH… [--release R]", "--to DEST", "(default COHORLY_RELEASE)"]
        ),
    ])
    func helpListsTheTable(_ words: [String], _ expected: [String]) throws {
        let result = try CLI.run(words + ["--help"])
        #expect(result.status == 0)
        for text in expected { #expect(result.stdout.contains(text), "\(text) in \(result.stdout)") }
        #expect(result.stdout.contains("  -h, --help"))
    }
}
