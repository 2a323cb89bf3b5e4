import CohorlyCollector
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `cohorly` binary's error messages say how to fix the problem, not only what it is (issue 25): each
/// case runs the CLI against a loopback collector, a port nothing listens on, or bad arguments.
@Suite struct CLIMessagesTests {
    /// The child's environment: only PATH (and what is given), so no secret or host leaks in from the test's.
    static func run(_ arguments: [String], _ environment: [String: String] = [:]) async throws -> (
        status: Int32, output: String, error: String
    ) {
        try await CLITests.run(arguments, environment: environment)
    }

    @Test func unauthorizedNamesTheSecretAndWhereItIsRead() async throws {
        let collector = try startCollector { $0.adminToken = "the-secret" }
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let missing = try await Self.run(["crashes", "list", "--host", host])
        #expect(missing.status == 1)
        #expect(missing.error.contains("answered 401"), "\(missing.error)")
        #expect(missing.error.contains("set COHORLY_AUTH_TOKEN, or pass --auth-token-file FILE"), "\(missing.error)")
        let wrong = try await Self.run(["events", "list", "--host", host], ["COHORLY_AUTH_TOKEN": "not-it"])
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("is not the one this collector was started with"), "\(wrong.error)")
        let right = try await Self.run(["events", "list", "--host", host], ["COHORLY_AUTH_TOKEN": "the-secret"])
        #expect(right.status == 0, "\(right.error)")
        // The upload's check is refused the same way, with the same hint.
        let upload = try await Self.run([
            "debug-files", "upload", CLITests.cli.path, "--release", "r@1", "--host", host,
        ])
        #expect(upload.status == 1)
        #expect(upload.error.contains("refused the check (401)"), "\(upload.error)")
        #expect(upload.error.contains("set COHORLY_AUTH_TOKEN, or pass --auth-token-file FILE"), "\(upload.error)")
    }

    @Test func aHostWithoutASchemeSaysWhatToWrite() async throws {
        let option = try await Self.run(["crashes", "list", "--host", "127.0.0.1:4000"])
        #expect(option.status == 2)
        #expect(option.error.contains("invalid --host '127.0.0.1:4000'"), "\(option.error)")
        #expect(option.error.contains("(use http://127.0.0.1:4000)"), "\(option.error)")
        let variable = try await Self.run(["events", "list"], ["COHORLY_HOST": "localhost:4000"])
        #expect(variable.status == 2)
        #expect(variable.error.contains("invalid COHORLY_HOST 'localhost:4000'"), "\(variable.error)")
        #expect(variable.error.contains("(use http://localhost:4000)"), "\(variable.error)")
        let upload = try await Self.run([
            "debug-files", "upload", CLITests.cli.path, "--release", "r@1", "--host", "127.0.0.1:4000",
        ])
        #expect(upload.status == 2)
        #expect(upload.error.contains("(use http://127.0.0.1:4000)"), "\(upload.error)")
    }

    @Test func aPortInUseSuggestsPortZero() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let port = try #require(collector.baseURL.port)
        let data = temporaryDirectory()
        let serve = try await Self.run(["serve", "--port", String(port), "--data", data.path])
        #expect(serve.status == 1)
        #expect(serve.error.contains("port \(port) on 127.0.0.1 is in use"), "\(serve.error)")
        #expect(serve.error.contains("--port 0 for a free one"), "\(serve.error)")
    }

    @Test func anUnknownOptionOrCommandSuggestsTheNearest() async throws {
        let option = try await Self.run(["crashes", "list", "--limt", "5"])
        #expect(option.status == 2)
        #expect(option.error.hasPrefix("cohorly: unknown option '--limt' (did you mean --limit?)\n"), "\(option.error)")
        let far = try await Self.run(["crashes", "list", "--frobnicate"])
        #expect(far.status == 2)
        #expect(far.error.hasPrefix("cohorly: unknown option '--frobnicate'\n"), "\(far.error)")
        let command = try await Self.run(["crashs", "list"])
        #expect(command.status == 2)
        #expect(
            command.error.hasPrefix("cohorly: unknown command 'crashs' (did you mean crashes?)"), "\(command.error)")
        let subcommand = try await Self.run(["crashes", "lsit"])
        #expect(subcommand.status == 2)
        #expect(subcommand.error.contains("did you mean list?"), "\(subcommand.error)")
    }

    @Test func aRefusedConnectionAsksWhetherTheCollectorRuns() async throws {
        let port = try Self.portNobodyListensOn()
        let host = "http://127.0.0.1:\(port)"
        for arguments in [["crashes", "list"], ["crashes", "show", "abc"], ["flags", "list"]] {
            let result = try await Self.run(arguments + ["--host", host])
            #expect(result.status == 1)
            #expect(result.error.contains("is `cohorly serve` running at \(host)?"), "\(arguments): \(result.error)")
        }
        let upload = try await Self.run(
            ["debug-files", "upload", CLITests.cli.path, "--release", "r@1"],
            [
                "COHORLY_HOST": host, "COHORLY_RETRY_DELAY_MS": "0",
            ])
        #expect(upload.status == 1)
        #expect(upload.error.contains("is `cohorly serve` running at \(host)?"), "\(upload.error)")
    }

    @Test func anInvalidLevelListsTheValidOnesBeforeAskingTheCollector() async throws {
        // Nothing listens on the host: the value is refused before any request.
        let host = "http://127.0.0.1:\(try Self.portNobodyListensOn())"
        let typo = try await Self.run(["crashes", "list", "--level", "fatl", "--host", host])
        #expect(typo.status == 2)
        #expect(
            typo.error.hasPrefix(
                "cohorly: invalid --level 'fatl' (expected one of: fatal, error; did you mean fatal?)\n"),
            "\(typo.error)")
        let other = try await Self.run(["crashes", "list", "--level", "warning", "--host", host])
        #expect(other.status == 2)
        #expect(other.error.hasPrefix("cohorly: invalid --level 'warning' (expected one of: fatal, error)\n"))
    }

    @Test func anEmptyResultSaysNothingMatches() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let crashes = try await Self.run(["crashes", "list", "--host", host])
        #expect(crashes.status == 0, "\(crashes.error)")
        #expect(crashes.output == "no crashes match\n")
        let filtered = try await Self.run(["crashes", "list", "--host", host, "--level", "fatal", "--flag", "beta"])
        #expect(filtered.status == 0, "\(filtered.error)")
        #expect(filtered.output == "no crashes match --level fatal --flag beta\n")
        let events = try await Self.run(["events", "list", "--host", host])
        #expect(events.status == 0, "\(events.error)")
        #expect(events.output == "no events match\n")
        let sessions = try await Self.run(["sessions", "list", "--host", host])
        #expect(sessions.status == 0, "\(sessions.error)")
        #expect(sessions.output == "no sessions stored\n")
        // With one event the table is back.
        #expect(send(collector, "/track", body: event("Opened")).status == 200)
        let one = try await Self.run(["events", "list", "--host", host])
        #expect(one.output.hasPrefix("TIME (UTC)"))
        #expect(one.output.contains("Opened"))
    }

    /// A loopback port that was free a moment ago (bound to port 0, then closed): connecting to it is refused.
    static func portNobodyListensOn() throws -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        try #require(bound)
        return UInt16(bigEndian: address.sin_port)
    }
}
