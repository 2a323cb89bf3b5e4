import CohorlyCommandLine
import Foundation
import Testing

/// The bash completion script written from the option tables, run by bash itself: what it offers after each word.
@Suite struct CompletionScriptTests {
    static let commands: [(words: [String], spec: CommandSpec?)] = [
        (["things", "list"], CommandSpecTests.spec),
        (
            ["things", "show"],
            CommandSpec(
                words: ["things", "show"], summary: "",
                positionals: CommandPositionals("ID", count: 1...1, missing: "missing ID"),
                options: [.flag("--json", "")], epilogue: "")
        ),
        (["serve"], CommandSpec(words: ["serve"], summary: "", options: [.flag("--web", "")], epilogue: "")),
        // A command without a table completes its words only.
        (["legacy"], nil),
    ]

    /// What the script offers for the command line `words` (the last one being completed), one per line.
    static func offers(_ words: [String], in directory: String? = nil) throws -> [String] {
        let script = CompletionScript.bash(program: "tool", commands: commands)
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "--norc", "-c",
            script
                + "\nCOMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _tool; printf '%s\\n' \"${COMPREPLY[@]}\"",
        ]
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).sorted()
    }

    @Test func commandWordsComplete() throws {
        #expect(try Self.offers(["tool", ""]) == ["--help", "--version", "help", "legacy", "serve", "things"])
        #expect(try Self.offers(["tool", "th"]) == ["things"])
        #expect(try Self.offers(["tool", "things", ""]) == ["list", "show"])
        #expect(try Self.offers(["tool", "things", "s"]) == ["show"])
    }

    @Test func optionsOfTheCommandComplete() throws {
        #expect(try Self.offers(["tool", "things", "list", "--l"]) == ["--level", "--limit"])
        #expect(try Self.offers(["tool", "things", "show", "--"]) == ["--help", "--json"])
        #expect(try Self.offers(["tool", "serve", "--"]) == ["--help", "--web"])
        // Unlisted options complete too: they are parsed.
        #expect(try Self.offers(["tool", "things", "list", "--s"]) == ["--secret"])
        #expect(try Self.offers(["tool", "legacy", "--"]) == [])
    }

    @Test func valuesCompleteByTheirKind() throws {
        #expect(try Self.offers(["tool", "things", "list", "--level", ""]) == ["error", "fatal"])
        #expect(try Self.offers(["tool", "things", "list", "--level", "f"]) == ["fatal"])
        // A word value (URL) offers nothing, not the options.
        #expect(try Self.offers(["tool", "things", "list", "--host", ""]) == [])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("completion-\(UUID())")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("subdir"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("file.txt").path, contents: nil)
        // A directory option offers directories; file positionals offer files and directories; an ID nothing.
        #expect(try Self.offers(["tool", "things", "list", "--path", ""], in: directory.path) == ["subdir"])
        #expect(try Self.offers(["tool", "things", "list", ""], in: directory.path) == ["file.txt", "subdir"])
        #expect(try Self.offers(["tool", "things", "show", ""], in: directory.path) == [])
    }
}
