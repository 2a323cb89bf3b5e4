import Foundation
import Testing

/// `cohorly symbolicate --exe` hands over to the lean `cohorly-symbolicate` beside it (no Foundation in that
/// process: the memory a long run holds), and runs in process when there is none.
@Suite struct SymbolicateHandoverTests {
    /// One run of `cohorly` (or a copy of it) with the dynamic loader's trace: the programs the process ran, in
    /// order, and the shared libraries each of them loaded.
    struct TracedRun {
        var programs: [(path: String, libraries: Set<String>)] = []
        var result: CLI.Result
    }

    static func traced(_ arguments: [String], executable: String? = nil, input: String = "") throws -> TracedRun {
        var environment = ProcessInfo.processInfo.environment
        environment["DEBUGINFOD_URLS"] = nil
        environment["LD_DEBUG"] = "files"
        let result = try CLI.run(arguments, input: input, environment: environment, executable: executable)
        var run = TracedRun(result: result)
        var stderr = ""
        // The loader lists a program's libraries, then "transferring control: PROGRAM"; what a program opens
        // later (dlopen) follows that line.
        var libraries: Set<String> = []
        for line in result.stderr.split(separator: "\n", omittingEmptySubsequences: false) {
            // "  1234:	file=libdw.so.1 [0];  needed by …", "  1234:	transferring control: /path/cohorly-symbolicate"
            guard let colon = line.firstIndex(of: ":"), line[..<colon].allSatisfy({ $0 == " " || $0.isNumber }),
                line[..<colon].contains(where: \.isNumber)
            else {
                stderr += line + "\n"
                continue
            }
            let message = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if message.hasPrefix("transferring control: ") {
                run.programs.append((String(message.dropFirst("transferring control: ".count)), libraries))
                libraries = []
            } else if message.hasPrefix("file=") {
                let name = message.dropFirst(5).prefix { $0 != " " && $0 != "\t" && $0 != ";" }
                libraries.insert(String(name.split(separator: "/").last ?? name))
            }
        }
        if !run.programs.isEmpty { run.programs[run.programs.count - 1].libraries.formUnion(libraries) }
        run.result.stderr = String(stderr.dropLast())
        return run
    }

    static func isFoundation(_ library: String) -> Bool {
        library.hasPrefix("libFoundation") || library.hasPrefix("lib_FoundationICU")
    }

    /// A directory holding a copy of `cohorly` alone (or with `sibling` as `cohorly-symbolicate`).
    static func cohorlyCopy(_ name: String, sibling: (contents: Data, mode: Int)? = nil) throws -> String {
        let directory = Scratch.path(name)
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let copy = directory + "/cohorly"
        try FileManager.default.copyItem(atPath: CLI.path, toPath: copy)
        if let sibling {
            let path = directory + "/cohorly-symbolicate"
            try sibling.contents.write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: sibling.mode], ofItemAtPath: path)
        }
        return copy
    }

    static func addresses() throws -> [String] {
        let fixtures = try CLIFixtures.get()
        let main = try #require(try fixtures.symbol("main"))
        return ["0x" + String(try fixtures.trapAddress(), radix: 16), String(main, radix: 16), "0x9a0000"]
    }

    @Test func exeModeRunsInTheLeanExecutableWithoutFoundation() throws {
        let fixtures = try CLIFixtures.get()
        let addresses = try Self.addresses()
        let run = try Self.traced(
            ["symbolicate", "--exe", fixtures.path("shop"), "--simplified"], input: addresses.joined(separator: "\n"))
        #expect(
            run.programs.map { URL(fileURLWithPath: $0.path).lastPathComponent } == ["cohorly", "cohorly-symbolicate"])
        let lean = try #require(run.programs.last)
        #expect(lean.libraries.contains("libdw.so.1"), "the trace lists what was loaded: \(lean.libraries.sorted())")
        #expect(!lean.libraries.contains(where: Self.isFoundation), "\(lean.libraries.sorted())")
        #expect(run.programs.first?.libraries.contains(where: Self.isFoundation) == true)
        // The same output, status and messages as in process (0x9a0000 is in no function: status 1).
        let copy = try Self.cohorlyCopy("handover-alone")
        let alone = try Self.traced(
            ["symbolicate", "--exe", fixtures.path("shop"), "--simplified"], executable: copy,
            input: addresses.joined(separator: "\n"))
        #expect(alone.programs.map(\.path) == [copy])
        #expect(run.result.stdout == alone.result.stdout)
        #expect(run.result.stdout.contains("Swift runtime failure: Division by zero\n"))
        #expect(run.result.status == 1 && alone.result.status == 1)
        #expect(run.result.stderr == alone.result.stderr)
    }

    @Test func theLeanExecutableGetsTheArgumentsAsGiven() throws {
        // A stand-in that prints what it was given: options in every form, `--` and addresses pass unchanged.
        let script = Data("#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\nexit 7\n".utf8)
        let copy = try Self.cohorlyCopy("handover-arguments", sibling: (script, 0o755))
        let directory = Scratch.emptyDirectory
        let arguments = ["--exe=/bin/true", "--debug-dir", directory, "--json", "--", "0x10", "-1"]
        let result = try CLI.run(["symbolicate"] + arguments, executable: copy)
        #expect(result.stdout == arguments.map { "[\($0)]\n" }.joined())
        #expect(result.status == 7)
    }

    @Test func anUnusableLeanExecutableLeavesTheWorkInProcess() throws {
        let fixtures = try CLIFixtures.get()
        let script = Data("#!/bin/sh\necho replaced\n".utf8)
        let copy = try Self.cohorlyCopy("handover-not-executable", sibling: (script, 0o644))
        let result = try CLI.run(
            ["symbolicate", "--exe", fixtures.path("shop"), try Self.addresses()[0]], executable: copy)
        #expect(result.status == 0)
        #expect(result.stdout.contains("Swift runtime failure: Division by zero\n"))
        // Usage errors are found before any handover: the stand-in would have printed "replaced".
        let usage = try CLI.run(["symbolicate", "--exe", "a", "--exe", "b"], executable: copy)
        #expect(usage.status == 2)
        #expect(usage.stderr.hasPrefix("cohorly: --exe takes exactly one file\n"))
    }

    @Test func theLeanExecutableAlone() throws {
        let lean = URL(fileURLWithPath: CLI.path).deletingLastPathComponent().appendingPathComponent(
            "cohorly-symbolicate"
        ).path
        let help = try CLI.run(["--help"], executable: lean)
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("USAGE: cohorly symbolicate "))
        let report = try CLI.run(["report.json"], executable: lean)
        #expect(report.status == 2)
        #expect(report.stderr.contains("takes --exe FILE; a report is read by `cohorly symbolicate REPORT.json`"))
        let missing = try CLI.run(["--exe", "/no/such/file", "0x10"], executable: lean)
        #expect(missing.status == 1)
        #expect(missing.stderr == "cohorly: /no/such/file: cannot open: No such file or directory\n")
    }
}
