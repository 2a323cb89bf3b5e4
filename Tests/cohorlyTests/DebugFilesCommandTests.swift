import CohorlySymbols
import Foundation
import Testing

@Suite struct DebugFilesCommandTests {
    @Test func checkPrintsFactsAndProblems() throws {
        let fixtures = try CLIFixtures.get()
        let info = try ObjectInfo(path: fixtures.path("shop"))
        let result = try CLI.run([
            "debug-files", "check", fixtures.path("shop"), fixtures.path("shop.debug"),
        ])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let expected = """
            \(fixtures.path("shop"))
              kind:       executable
              arch:       x86_64
              code_id:    \(info.codeId ?? "")
              debug_id:   \(info.debugId ?? "")
              features:   symtab, debug, unwind
              usable:     yes
            \(fixtures.path("shop.debug"))
              kind:       debug companion
              arch:       x86_64
              code_id:    \(info.codeId ?? "")
              debug_id:   \(info.debugId ?? "")
              features:   symtab, debug
              usable:     with problems
                - debug file without unwind info (upload the executable too)
            2 files checked: 1 usable, 1 with problems, 0 unreadable

            """
        #expect(result.stdout == expected)
    }

    @Test func checkJSONAndFailuresKeepGoing() throws {
        let fixtures = try CLIFixtures.get()
        let notELF = CLIFixtures.repository + "/fixtures/reports/minimal.json"
        let result = try CLI.run([
            "debug-files", "check", "--json", notELF, fixtures.path("shop.stripped"), "/no/such",
            fixtures.directory,
        ])
        #expect(result.status == 1)
        #expect(
            result.stderr == """
                cohorly: \(notELF): not an ELF file
                cohorly: /no/such: cannot open: No such file or directory
                cohorly: \(fixtures.directory): not a regular file

                """)
        let items = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(items.count == 4)
        #expect(items[0]["error"] as? String == "\(notELF): not an ELF file")
        let stripped = items[1]
        #expect(stripped["kind"] as? String == "executable")
        #expect(stripped["features"] as? [String] == ["symtab", "unwind"])
        #expect((stripped["debug_link"] as? [String: Any])?["name"] as? String == "shop.debug")
        #expect(
            stripped["problems"] as? [String] == ["no debug info (upload before strip, or build with -g)"]
        )
    }

    /// Root can read any file, so the check runs as `nobody` (setpriv) on a root-owned 0600 file.
    @Test(
        .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func unreadableFile() throws {
        let path = Scratch.path("unreadable")
        try Data([0x7f, 0x45, 0x4c, 0x46]).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        let result = try CLI.run(
            ["--reuid=65534", "--regid=65534", "--clear-groups", CLI.path, "debug-files", "check", path],
            executable: "/usr/bin/setpriv")
        #expect(result.status == 1)
        #expect(result.stderr == "cohorly: \(path): cannot open: Permission denied\n")
    }

    /// An unreadable debug file is an error that names it, named or found in a directory (run as `nobody`, as
    /// above; the directories are open to it, the file is not).
    @Test(
        .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func anUnreadableDebugFileFailsTheUpload() throws {
        let directory = NSTemporaryDirectory() + "cohorly-unreadable-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: true)
        let file = directory + "/bin/prog.debug"
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: file)
        chmod(directory, 0o755)
        chmod(directory + "/bin", 0o755)
        chmod(file, 0o600)
        for path in [directory, file] {
            let result = try CLI.run(
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", CLI.path, "debug-files", "upload", path,
                    "--dry-run", "--allow-empty",
                ],
                executable: "/usr/bin/setpriv")
            #expect(result.status == 1, "\(result.stdout)")
            #expect(result.stderr.contains("cohorly: \(file): cannot read: Permission denied"), "\(result.stderr)")
        }
    }

    @Test func findByCodeIdAndDebugId() throws {
        let fixtures = try CLIFixtures.get()
        let info = try ObjectInfo(path: fixtures.path("shop"))
        let codeId = try #require(info.codeId)
        let debugId = try #require(info.debugId)
        for id in [codeId, debugId.uppercased()] {
            let result = try CLI.run(["debug-files", "find", id, "--path", fixtures.directory, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let items = try #require(
                try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
            let debugFiles = (items.first?["debug_files"] as? [[String: Any]])?.compactMap {
                $0["path"] as? String
            }
            let executables = (items.first?["executables"] as? [[String: Any]])?.compactMap {
                $0["path"] as? String
            }
            #expect(Set(debugFiles ?? []) == [fixtures.path("shop"), fixtures.path("shop.debug")])
            #expect(Set(executables ?? []) == [fixtures.path("shop"), fixtures.path("shop.stripped")])
        }
        let text = try CLI.run(["debug-files", "find", codeId, "--path", fixtures.directory])
        #expect(text.stdout.hasPrefix("\(codeId)\n  code_id:    \(codeId)\n  debug_id:   \(debugId)\n"))
        #expect(text.stdout.contains("  debug file: \(fixtures.path("shop.debug")) (search path)\n"))
    }

    @Test func findMissingAndMalformedIds() throws {
        let fixtures = try CLIFixtures.get()
        let missing = try CLI.run(
            [
                "debug-files", "find", "00112233445566778899aabbccddeeff00112233", "--path",
                fixtures.directory,
            ],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(missing.status == 1)
        #expect(missing.stdout == "00112233445566778899aabbccddeeff00112233\n  not found\n")
        let malformed = try CLI.run(["debug-files", "find", "not-an-id"])
        #expect(malformed.status == 2)
        #expect(
            malformed.stderr.hasPrefix(
                "cohorly: 'not-an-id' is neither a code_id (hex) nor a debug_id (GUID)\n"))
    }

    /// A real debuginfod client (libdebuginfod) against a local server: found by build id, verified, cached.
    @Test func findAndSymbolicateThroughDebuginfod() throws {
        let fixtures = try CLIFixtures.get()
        let info = try ObjectInfo(path: fixtures.path("shop"))
        let codeId = try #require(info.codeId)
        let server = try TinyHTTPServer(routes: [
            "/buildid/\(codeId)/debuginfo": fixtures.path("shop.debug"),
            "/buildid/\(codeId)/executable": fixtures.path("shop.stripped"),
        ])
        defer { server.stop() }
        let cache = Scratch.path("debuginfod-cache")
        try? FileManager.default.removeItem(atPath: cache)
        let environment = [
            "DEBUGINFOD_URLS": server.url, "DEBUGINFOD_CACHE_PATH": cache, "HOME": cache,
        ]
        let found = try CLI.run(["debug-files", "find", codeId, "--json"], environment: environment)
        #expect(found.status == 0, "\(found.stderr)")
        let items = try #require(
            try JSONSerialization.jsonObject(with: Data(found.stdout.utf8)) as? [[String: Any]])
        let debugFile = try #require((items.first?["debug_files"] as? [[String: Any]])?.first)
        #expect(debugFile["source"] as? String == "debuginfod")
        #expect((debugFile["path"] as? String)?.hasPrefix(cache) == true)
        #expect(debugFile["code_id"] as? String == codeId)
        let executable = try #require((items.first?["executables"] as? [[String: Any]])?.first)
        #expect(executable["source"] as? String == "debuginfod")
        #expect(server.requests.contains("/buildid/\(codeId)/debuginfo"))

        // A report whose module path does not exist here is symbolicated from the server's debug file.
        let report = try fixtures.report().replacingOccurrences(
            of: fixtures.path("shop") + "\"", with: "/opt/gone/shop\"")
        let path = Scratch.path("debuginfod-report.json")
        try report.write(toFile: path, atomically: true, encoding: .utf8)
        let symbolicated = try CLI.run(["symbolicate", path], environment: environment)
        #expect(
            symbolicated.stdout.hasPrefix("Crash: Swift runtime failure: Division by zero"),
            "\(symbolicated.stderr)")
    }
}

@Suite struct JSONOutputTests {
    /// Paths with quotes, backslashes, control characters and non-ASCII survive `--json` intact.
    @Test func awkwardPathsRoundTrip() throws {
        let fixtures = try CLIFixtures.get()
        let directory = Scratch.path("json")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let name = directory + "/a \"quoted\" back\\slash\ttab\u{1}ctl-é.elf"
        try? FileManager.default.removeItem(atPath: name)
        try FileManager.default.copyItem(atPath: fixtures.path("inline"), toPath: name)
        let result = try CLI.run(["debug-files", "check", "--json", name])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\\u0001"))
        let items = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(items.first?["path"] as? String == name)
    }
}
