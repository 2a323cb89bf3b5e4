import CohorlySymbols
import Foundation
import Testing

/// The conventions sentry-cli users expect, and readable names in `symbolicate`.
@Suite struct CLIConventionsTests {
    @Test func helpCommandIsCommandHelp() throws {
        for words in [["symbolicate"], ["debug-files", "upload"], ["crashes", "show"]] {
            let help = try CLI.run(["help"] + words)
            let flag = try CLI.run(words + ["--help"])
            #expect(help.status == 0)
            #expect(help.stdout == flag.stdout)
            #expect(help.stdout.hasPrefix("USAGE: cohorly " + words.joined(separator: " ")))
        }
        let unknown = try CLI.run(["help", "frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.hasPrefix("cohorly: unknown command 'frobnicate'"))
    }

    @Test func symbolicateReadsAReportFromStandardInput() throws {
        let fixtures = try CLIFixtures.get()
        let report = try fixtures.report()
        let path = try SymbolicateCommandTests.temporary("stdin-report.json", report)
        let fromFile = try CLI.run(["symbolicate", path])
        let fromStdin = try CLI.run(["symbolicate", "-"], input: report)
        #expect(fromStdin.status == 0, "\(fromStdin.stderr)")
        #expect(fromStdin.stdout == fromFile.stdout)
        let garbage = try CLI.run(["symbolicate", "-"], input: "{")
        #expect(garbage.status == 1)
        #expect(garbage.stderr.hasPrefix("cohorly: standard input: not a crash report"))
    }

    @Test func missingSearchDirectoriesAreUsageErrors() throws {
        let fixtures = try CLIFixtures.get()
        let report = try SymbolicateCommandTests.temporary("dirs-report.json", try fixtures.report())
        let symbolicate = try CLI.run(["symbolicate", report, "--debug-dir", "/no/such/dir"])
        #expect(symbolicate.status == 2)
        #expect(symbolicate.stderr.hasPrefix("cohorly: --debug-dir /no/such/dir: no such directory\n"))
        let exe = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), "--debug-dir", "/no/such/dir", "0x10"])
        #expect(exe.status == 2)
        let find = try CLI.run(["debug-files", "find", "00112233", "--path", "/no/such/dir"])
        #expect(find.status == 2)
        #expect(find.stderr.hasPrefix("cohorly: --path /no/such/dir: no such directory\n"))
    }

    @Test func findSearchesTheCurrentDirectoryByDefault() throws {
        let fixtures = try CLIFixtures.get()
        let codeId = try #require(try ObjectInfo(path: fixtures.path("shop")).codeId)
        let here = try CLI.run(["debug-files", "find", codeId], directory: fixtures.directory)
        #expect(here.status == 0, "\(here.stderr)")
        #expect(here.stdout.contains("  debug file: ./shop.debug (search path)\n"))
        let elsewhere = try CLI.run(["debug-files", "find", codeId])  // an empty directory
        #expect(elsewhere.status == 1)
        #expect(elsewhere.stdout.hasSuffix("  not found\n"))
    }

    @Test func checkSumsUpManyFiles() throws {
        let fixtures = try CLIFixtures.get()
        let result = try CLI.run([
            "debug-files", "check", fixtures.path("shop"), fixtures.path("shop.debug"), "/no/such/file",
        ])
        #expect(result.status == 1)
        let last = result.stdout.split(separator: "\n").last.map(String.init)
        #expect(last == "3 files checked: 1 usable, 1 with problems, 1 unreadable")
        let one = try CLI.run(["debug-files", "check", fixtures.path("shop")])
        #expect(!one.stdout.contains("files checked"))
        let json = try CLI.run(["debug-files", "check", "--json", fixtures.path("shop"), fixtures.path("shop.debug")])
        #expect(!json.stdout.contains("files checked"))
    }

    @Test func uploadDryRunSendsNothing() throws {
        let fixtures = try CLIFixtures.get()
        // Port 9 on loopback: nothing listens, so any request would fail the run.
        let result = try CLI.run([
            "debug-files", "upload", "--dry-run", fixtures.path("shop.debug"), fixtures.path("shop.stripped"),
            "--host", "http://127.0.0.1:9",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("  would upload    debuginfo"))
        #expect(result.stdout.contains("  would upload    executable"))
        #expect(
            result.stdout.hasSuffix(
                "dry run: 2 would be uploaded (if the collector lacks them), 0 skipped; nothing was sent\n"))
        let json = try CLI.run([
            "debug-files", "upload", "--dry-run", "--json", fixtures.path("shop.debug"), "--host", "http://127.0.0.1:9",
        ])
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(summary["dry_run"] as? Bool == true)
        #expect(summary["would_upload"] as? Int == 1)
        #expect(summary["bytes_sent"] as? Int == 0)
        let posthog = try CLI.run([
            "debug-files", "upload", "--dry-run", "--to", "posthog", fixtures.path("shop.debug"),
        ])
        #expect(posthog.status == 2)
        #expect(posthog.stderr.hasPrefix("cohorly: --dry-run works with our collector only, not --to posthog\n"))
    }

    @Test func anEmptyInsertIdIsAUsageError() throws {
        let result = try CLI.run(["crashes", "show", ""])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("cohorly: expected one INSERT_ID (or a prefix of one)\n"))
    }

    @Test func reportNamesAreSimplifiedUnlessFullNamesAreAsked() throws {
        let fixtures = try CLIFixtures.get()
        let report = try SymbolicateCommandTests.temporary("names-report.json", try fixtures.report())
        let simplified = try CLI.run(["symbolicate", report])
        #expect(simplified.stdout.contains(" shop run(_:) at "))
        #expect(simplified.stdout.contains("[inlined] Cart.checkout(discount:) at "))
        let full = try CLI.run(["symbolicate", report, "--full-names"])
        #expect(full.stdout.contains(" shop shop.run(Swift.Array<Swift.String>) -> Swift.Int at "))
        #expect(full.stdout.contains("[inlined] shop.Cart.checkout(discount: Swift.Int) -> Swift.Int at "))
        let both = try CLI.run(["symbolicate", report, "--full-names", "--simplified"])
        #expect(both.status == 2)
    }

    @Test func executableNamesAreFullUnlessSimplifiedIsAsked() throws {
        let fixtures = try CLIFixtures.get()
        let trap = "0x" + String(try fixtures.trapAddress(), radix: 16)
        let full = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), trap])
        #expect(full.stdout.contains("\nshop.Cart.checkout(discount: Swift.Int) -> Swift.Int\n"))
        let simplified = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), "--simplified", trap])
        #expect(simplified.status == 0)
        #expect(simplified.stdout.contains("\nCart.checkout(discount:)\n"))
        #expect(simplified.stdout.contains("\nrun(_:)\n"))
        #expect(simplified.stdout.contains("\nSwift runtime failure: Division by zero\n"))
    }

    @Test func anAddressOutsideEverySectionIsUnresolved() throws {
        let fixtures = try CLIFixtures.get()
        let result = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), "0x9a0000"])
        #expect(result.status == 1)
        #expect(result.stdout == "0x9a0000\n??\n??:0:0\n\n")
    }

    @Test func rawModulesComeWithAdvice() throws {
        let fixtures = try CLIFixtures.get()
        let report = try fixtures.report().replacingOccurrences(
            of: fixtures.path("shop") + "\"", with: "/opt/gone/shop\"")
        let path = try SymbolicateCommandTests.temporary("advice-report.json", report)
        let result = try CLI.run(["symbolicate", path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Unsymbolicated modules (no usable debug file found): /opt/gone/shop (build id"))
        #expect(result.stdout.contains("\nHint: give the directory holding their debug files with --debug-dir DIR"))
        #expect(result.stdout.contains("`cohorly debug-files upload`"))
        // A stripped binary without its debug file: names from its symbol table, no lines, and the same advice.
        let alone = Scratch.path("alone")
        try FileManager.default.createDirectory(atPath: alone, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: alone + "/shop")
        try FileManager.default.copyItem(atPath: fixtures.path("shop.stripped"), toPath: alone + "/shop")
        let stripped = try SymbolicateCommandTests.temporary(
            "advice-stripped.json",
            try fixtures.report().replacingOccurrences(of: fixtures.path("shop") + "\"", with: alone + "/shop\""))
        let symbolsOnly = try CLI.run(["symbolicate", stripped])
        #expect(
            symbolsOnly.stdout.contains("Symbol names only, no files or lines (no debug file found): \(alone)/shop"))
        #expect(symbolsOnly.stdout.contains("\nHint: give the directory holding their debug files"))
        let fixed = try CLI.run(["symbolicate", stripped, "--debug-dir", fixtures.directory])
        #expect(!fixed.stdout.contains("Symbol names only"))
        #expect(fixed.stdout.hasPrefix("Crash: Swift runtime failure: Division by zero"))
    }
}

/// Names and paths read from a debug file are input too: `symbolicate --exe` escapes their control characters.
@Suite struct ExecutableOutputEscapingTests {
    @Test func aSourcePathWithControlCharactersIsEscaped() throws {
        let directory = Scratch.path("escape")
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let source = directory + "/evil\u{1b}]0;x\u{7}.c"
        try "int answer(int x) { return x * 42; }\nint main(void) { return answer(1); }\n".write(
            toFile: source, atomically: true, encoding: .utf8)
        let binary = directory + "/evil"
        try CLIFixtures.tool("/opt/swift/usr/bin/clang", ["-O0", "-g", source, "-o", binary])
        let info = try ModuleSymbolicator(debugFile: binary)
        let address = try #require(
            (UInt64(0x100)..<0x4000).first { info.symbolicate($0).frames.first?.function == "answer" })
        let result = try CLI.run(["symbolicate", "--exe", binary, "0x" + String(address, radix: 16)])
        #expect(result.status == 0)
        #expect(!result.stdout.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 })
        #expect(result.stdout.contains(#"/evil\x1b]0;x\x07.c:1:"#), "\(result.stdout)")
        // JSON stays exact.
        let json = try CLI.run(["symbolicate", "--exe", binary, "--json", "0x" + String(address, radix: 16)])
        #expect(json.stdout.contains(#"evil\u001b]0;x\u0007.c"#), "\(json.stdout)")
    }
}
