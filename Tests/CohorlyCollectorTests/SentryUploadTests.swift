import Cohorly
import Foundation
import Testing

/// `cohorly debug-files upload --to sentry` as a real process against ``SentryMock`` over loopback.
@Suite struct SentryUploadTests {
    static let token = "sntrys_test_token_0123456789abcdef"

    /// Runs the upload with sentry-cli's environment pointing at the mock, retries and polls made fast.
    static func upload(_ arguments: [String], _ mock: SentryMock, environment: [String: String] = [:]) async throws
        -> (status: Int32, output: String, error: String)
    {
        let base = [
            "SENTRY_URL": mock.url, "SENTRY_ORG": SentryMock.org, "SENTRY_PROJECT": SentryMock.project,
            "SENTRY_AUTH_TOKEN": token, "COHORLY_RETRY_DELAY_MS": "1",
        ]
        let result = try await CLITests.run(
            ["debug-files", "upload", "--to", "sentry"] + arguments, environment: base.merging(environment) { $1 })
        // The token is never shown, whatever happened.
        #expect(!result.output.contains(token) && !result.error.contains(token))
        return result
    }

    /// The split program's three files in one directory.
    static func directory(_ program: SplitProgram) throws -> String {
        let directory = SplitProgram.scratch("sentry")
        for file in [program.full, program.debug, program.stripped] {
            try FileManager.default.copyItem(
                atPath: file, toPath: directory + "/" + (file as NSString).lastPathComponent)
        }
        return directory
    }

    /// Each file's debug id as getsentry's `symbolic` reads it (`Archive.open(path)`).
    static func symbolicDebugIds(_ paths: [String]) throws -> [String: String] {
        let script = """
            import sys, symbolic
            for path in sys.argv[1:]:
                for obj in symbolic.debuginfo.Archive.open(path).iter_objects():
                    print(path, obj.debug_id)
            """
        let output = try SplitProgram.run("/usr/bin/env", ["python3", "-c", script] + paths)
        var ids: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 { ids[String(parts[0])] = String(parts[1]) }
        }
        return ids
    }

    @Test func onlyMissingChunksAreSentAndASecondUploadSendsNothing() async throws {
        let program = try SplitProgram.get()
        let directory = try Self.directory(program)
        let mock = try SentryMock(token: Self.token)
        defer { mock.stop() }
        // Small chunks and requests, so files span several of each; the server already holds the first two
        // chunks of the full program.
        let full = contents(directory + "/prog")
        mock.with {
            $0.chunkSize = 4096
            $0.chunksPerRequest = 3
            $0.maxRequestSize = 3 * 4096 + 2048
            $0.pollsUntilOK = 2
            for index in 0..<2 {
                let chunk = Array(full[(index * 4096)..<((index + 1) * 4096)])
                $0.chunks[SentryMock.sha1(chunk)] = chunk
            }
        }
        let held = Set(mock.with { $0.chunks.keys })
        let first = try await Self.upload([directory], mock)
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.contains("3 uploaded"), "\(first.output)")
        let state = mock.with { $0 }
        #expect(state.problems.isEmpty, "\(state.problems)")
        #expect(state.fields == ["file_gzip"])
        let sent = state.chunkRequests.flatMap { $0 }
        #expect(Set(sent).isDisjoint(with: held), "a chunk the server held was sent again")
        #expect(sent.count == Set(sent).count, "a chunk was sent twice")
        #expect(state.chunkRequests.allSatisfy { $0.count <= 3 })
        // Every file arrived whole, under its name and the debug id symbolic reads.
        let paths = ["prog", "prog.debug", "prog.stripped"].map { directory + "/" + $0 }
        let ids = try Self.symbolicDebugIds(paths)
        #expect(ids.count == 3)
        for path in paths {
            let bytes = contents(path)
            let stored = try #require(state.files[SentryMock.sha1(bytes)], "\(path) not assembled")
            #expect(stored.bytes == bytes)
            #expect(stored.name == (path as NSString).lastPathComponent)
            #expect(stored.debugId == ids[path])
        }

        let before = state.chunkRequests.count
        let second = try await Self.upload([directory], mock)
        #expect(second.status == 0, "\(second.error)")
        #expect(second.output.contains("0 uploaded (0 bytes sent), 3 already present"), "\(second.output)")
        #expect(mock.with { $0.chunkRequests.count } == before)
    }

    @Test func withoutGzipChunksGoAsFileAndTooLargeFilesFail() async throws {
        let program = try SplitProgram.get()
        let directory = try Self.directory(program)
        let mock = try SentryMock(token: Self.token)
        defer { mock.stop() }
        let small = min(contents(directory + "/prog.stripped").count, contents(directory + "/prog.debug").count)
        mock.with {
            $0.compression = []
            $0.maxFileSize = Int64(small)
            $0.pollsUntilOK = 0
        }
        let result = try await Self.upload([directory, "--json"], mock)
        #expect(result.status == 1)
        let summary = try #require(CohorlyValue(json: result.output))
        #expect(summary["uploaded"]?.intValue == 1)
        #expect(summary["failed"]?.intValue == 2)
        #expect(result.error.contains("maxFileSize"))
        #expect(mock.with { $0.fields } == ["file"])
        #expect(mock.with { $0.problems }.isEmpty)
    }

    @Test func anErrorStateFailsTheRun() async throws {
        let program = try SplitProgram.get()
        let mock = try SentryMock(token: Self.token)
        defer { mock.stop() }
        mock.with { $0.errorDetail = "missing debug information" }
        let result = try await Self.upload([program.debug], mock)
        #expect(result.status == 1)
        #expect(result.error.contains("Sentry could not process it: missing debug information"), "\(result.error)")
    }

    /// A server's text reaches the terminal escaped and clipped (issue 41, item 5): an assemble `detail` with ESC
    /// and BEL bytes and 100 KB of text prints as escapes, at most a few hundred characters of it.
    @Test func aServersDetailIsEscapedAndClipped() async throws {
        let program = try SplitProgram.get()
        let mock = try SentryMock(token: Self.token)
        defer { mock.stop() }
        let hostile = "\u{1b}[2J\u{1b}]0;owned\u{7}\u{202e}gpj.exe" + String(repeating: "x", count: 100_000)
        mock.with { $0.errorDetail = hostile }
        let result = try await Self.upload([program.debug], mock)
        #expect(result.status == 1)
        let output = result.error + result.output
        #expect(!output.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 || $0.value == 0x202e })
        #expect(output.contains(#"Sentry could not process it: \x1b[2J\x1b]0;owned\x07\u{202e}gpj.exe"#), "\(output)")
        #expect(output.contains("(99722 more characters)"), "\(output.prefix(2000))")
        #expect(output.utf8.count < 4000)
    }

    @Test func theWaitForAssemblingIsBounded() async throws {
        let program = try SplitProgram.get()
        let mock = try SentryMock(token: Self.token)
        defer { mock.stop() }
        mock.with { $0.neverFinish = true }
        let started = ContinuousClock.now
        let result = try await Self.upload([program.debug, "--max-wait", "0.3"], mock)
        #expect(result.status == 1)
        #expect(result.error.contains("still assembling on the server after 0.3 s"), "\(result.error)")
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test func theTokenIsCheckedAndNeverTakenFromTheCommandLine() async throws {
        let program = try SplitProgram.get()
        let mock = try SentryMock(token: Self.token)
        defer { mock.stop() }
        let wrong = try await Self.upload([program.debug], mock, environment: ["SENTRY_AUTH_TOKEN": "wrong"])
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("401"), "\(wrong.error)")
        let onTheLine = try await Self.upload([program.debug, "--auth-token", Self.token], mock)
        #expect(onTheLine.status == 2)
        // From a file: accepted.
        let file = SplitProgram.scratch("token") + "/token"
        try Data((Self.token + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let fromFile = try await Self.upload(
            [program.debug, "--auth-token-file", file], mock, environment: ["SENTRY_AUTH_TOKEN": ""])
        #expect(fromFile.status == 0, "\(fromFile.error)")
        let missing = try await Self.upload([program.debug], mock, environment: ["SENTRY_ORG": ""])
        #expect(missing.status == 2)
        #expect(missing.error.contains("SENTRY_ORG"))
        let notSentry = try await CLITests.run(
            ["debug-files", "upload", program.debug, "--release", "r", "--org", "acme"], environment: [:])
        #expect(notSentry.status == 2)
        #expect(notSentry.error.hasPrefix("cohorly: --org works with --to sentry only"))
    }
}

/// The mock is checked against the real client: `sentry-cli debug-files upload` (PyPI `sentry-cli`) uploads
/// the same files to it without a protocol violation, so what the mock demands of our upload is what Sentry's
/// own client does.
@Suite struct SentryMockOracleTests {
    @Test func sentryCLIUploadsToTheMockWithoutAViolation() async throws {
        let program = try SplitProgram.get()
        let directory = try SentryUploadTests.directory(program)
        let mock = try SentryMock(token: SentryUploadTests.token)
        defer { mock.stop() }
        mock.with {
            $0.chunkSize = 4096
            $0.chunksPerRequest = 3
            $0.maxRequestSize = 3 * 4096 + 2048
        }
        let environment = [
            "SENTRY_URL": mock.url, "SENTRY_AUTH_TOKEN": SentryUploadTests.token, "SENTRY_LOG_LEVEL": "info",
            "SENTRY_DISABLE_UPDATE_CHECK": "1", "HOME": SplitProgram.scratch("home"),
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        ]
        let output = try SplitProgram.run(
            "/usr/bin/env",
            [
                "sentry-cli", "debug-files", "upload", "--org", SentryMock.org, "--project", SentryMock.project,
                "--wait",
                directory,
            ], environment: environment)
        let state = mock.with { $0 }
        #expect(state.problems.isEmpty, "\(state.problems)")
        #expect(!state.chunkRequests.isEmpty, "\(state.requests) \(output)")
        // Gzipped chunks in `file_gzip`, within the request limits: as ours are sent.
        #expect(state.fields == ["file_gzip"])
        #expect(state.chunkRequests.allSatisfy { $0.count <= 3 })
        for name in ["prog", "prog.debug"] {
            let bytes = contents(directory + "/" + name)
            #expect(state.files[SentryMock.sha1(bytes)]?.bytes == bytes, "\(name): \(state.requests)")
        }
    }
}
