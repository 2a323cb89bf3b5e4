import Cohorly
import CohorlyCollector
import CohorlySQLite
import Foundation
import TestWaiting
import Testing

/// `cohorly serve` as a real process: secrets, warnings, the request log, the data-directory lock, stopping.
@Suite struct ServeCommandTests {
    /// A running `cohorly serve` (under `umask` when given); `stop()` sends SIGTERM and waits (at most 10 s)
    /// for the exit.
    final class Server {
        let process = Process()
        let host: String
        private let errorPipe = Pipe()
        private let outputPipe = Pipe()

        init(
            _ arguments: [String], environment: [String: String] = [:], umask: String? = nil,
            shellPrelude: String? = nil
        ) async throws {
            process.executableURL = CLITests.cli
            process.arguments = ["serve", "--port", "0"] + arguments
            // What is per process (the umask, open descriptors) a shell sets up, then becomes the server.
            if let prelude = shellPrelude ?? umask.map({ "umask \($0)" }) {
                process.executableURL = URL(fileURLWithPath: "/bin/bash")
                process.arguments =
                    ["-c", "\(prelude) && exec \"$0\" \"$@\"", CLITests.cli.path] + (process.arguments ?? [])
            }
            process.environment = ["PATH": "/usr/bin:/bin", "HOME": testRoot.path].merging(environment) { $1 }
            process.standardOutput = outputPipe
            process.standardError = errorPipe
            try process.run()
            let output = outputPipe.fileHandleForReading
            let firstLine = try await offThePool {
                var firstLine = ""
                while !firstLine.contains("\n") {
                    let chunk = output.availableData
                    if chunk.isEmpty { break }
                    firstLine += String(decoding: chunk, as: UTF8.self)
                }
                return firstLine
            }
            host = firstLine.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }.map(String.init) ?? ""
        }

        /// Sends SIGTERM; returns the exit status, standard error and what it wrote to standard output after its
        /// first line, or nil when it did not end within 10 s.
        func stop() async -> (status: Int32, error: String, output: String)? {
            kill(process.processIdentifier, SIGTERM)
            let process = self.process
            let ended = await eventually(timeout: 10) { !process.isRunning }
            guard ended else {
                kill(process.processIdentifier, SIGKILL)
                return nil
            }
            await waitForExit(process)  // its status is set
            let error = String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let output = String(decoding: outputPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (process.terminationStatus, error, output)
        }

        /// ``stop()`` for a `defer` (which cannot wait asynchronously): SIGTERM, then a blocking wait for the exit,
        /// at most 10 s; SIGKILL after that.
        func stopSynchronously() {
            kill(process.processIdentifier, SIGTERM)
            let ended = DispatchSemaphore(value: 0)
            let process = self.process
            DispatchQueue.global().async {
                process.waitUntilExit()
                ended.signal()
            }
            if ended.wait(timeout: .now() + 10) != .success { kill(process.processIdentifier, SIGKILL) }
        }

        /// How many threads it runs.
        var threadCount: Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")) ?? [])
                .count
        }

        /// Waits (at most 5 s) until one of its threads sleeps in the kernel's `nanosleep` (its wait channel, from
        /// `/proc/PID/task/TID/wchan`); where the kernel hides wait channels (each reads `0`), until it runs more
        /// than `threads` threads instead. False when neither happened.
        func waitForASleepingThread(moreThan threads: Int) -> Bool {
            let tasks = "/proc/\(process.processIdentifier)/task"
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline {
                let channels = ((try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []).map {
                    (try? String(contentsOfFile: "\(tasks)/\($0)/wchan", encoding: .utf8)) ?? "0"
                }
                if channels.contains(where: { $0.contains("nanosleep") }) { return true }
                if channels.allSatisfy({ $0 == "0" || $0.isEmpty }), channels.count > threads { return true }
                usleep(5_000)
            }
            return false
        }

        /// The server's peak resident memory so far (`VmHWM`), KiB.
        func peakMemoryKB() throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let value = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
            else { throw FixtureError(reason: "no VmHWM") }
            return value
        }

        func get(_ path: String, headers: [(String, String)] = []) -> Int {
            send("GET", path, headers: headers)
        }

        /// The status of one request (0 when it failed).
        func send(_ method: String, _ path: String, body: String = "", headers: [(String, String)] = []) -> Int {
            guard let url = URL(string: host + path) else { return 0 }
            let request = TransportRequest(
                url: url, method: method, headers: headers, body: Array(body.utf8), timeout: 5, connectTimeout: 5)
            if case .http(let status, _, _) = CurlTransport().send(request) { return status }
            return 0
        }
    }

    @Test func anEmptySecretIsAUsageError() async throws {
        let flag = try await CLITests.run(["serve", "--port", "0", "--auth-token", ""])
        #expect(flag.status == 2)
        #expect(flag.error.contains("--auth-token is empty"))
        let environment = try await CLITests.run(["serve", "--port", "0"], environment: ["COHORLY_AUTH_TOKEN": ""])
        #expect(environment.status == 2)
        #expect(environment.error.contains("COHORLY_AUTH_TOKEN is set but empty"))
        let directory = temporaryDirectory()
        let empty = directory.appendingPathComponent("secret")
        try Data("\n".utf8).write(to: empty)
        let file = try await CLITests.run(["serve", "--port", "0", "--auth-token-file", empty.path])
        #expect(file.status == 2)
        #expect(file.error.contains("is empty"))
        let fifo = directory.appendingPathComponent("fifo")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let pipe = try await CLITests.run(["serve", "--port", "0", "--auth-token-file", fifo.path])
        #expect(pipe.status == 2)
        #expect(pipe.error.contains("not a regular file"))
    }

    /// libmicrohttpd's select() loop refused every socket numbered 1024 or above: a collector holding many
    /// descriptors could neither listen nor accept.
    ///
    /// The shell opens only descriptors that are free: one it overwrote could be the socket through which this
    /// process's Foundation learns that the child ended, whose thread then waits for this server to exit and
    /// every other `Process` wait in the test process with it.
    @Test func aServerHoldingOverAThousandDescriptorsStillListensAndAnswers() async throws {
        let server = try await Server(
            ["--data", temporaryDirectory().path],
            shellPrelude:
                "for i in $(seq 10 1100); do [ -e /proc/$$/fd/$i ] || eval \"exec $i</dev/null\"; done; true")
        #expect(server.host.hasPrefix("http://127.0.0.1:"))
        #expect(server.get("/api/events") == 200)
        #expect(await server.stop()?.status == 0)
    }

    @Test func theFlagSecretGuardsLocalEvaluationApartFromTheAdminSecret() async throws {
        let directory = temporaryDirectory()
        let flagSecret = directory.appendingPathComponent("flag-secret")
        try Data("flag-s3cret\n".utf8).write(to: flagSecret)
        let server = try await Server(
            ["--data", directory.appendingPathComponent("data").path, "--flag-secret-file", flagSecret.path],
            environment: ["COHORLY_AUTH_TOKEN": "admin-s3cret"])
        #expect(server.get("/flags/local-evaluation") == 401)
        #expect(server.get("/flags/local-evaluation", headers: [("Authorization", "Bearer admin-s3cret")]) == 401)
        #expect(server.get("/flags/local-evaluation", headers: [("Authorization", "Bearer flag-s3cret")]) == 200)
        let result = try #require(await server.stop())
        #expect(!result.error.contains("s3cret"))
        let empty = try await CLITests.run(["serve", "--port", "0"], environment: ["COHORLY_FLAG_SECRET": ""])
        #expect(empty.status == 2)
        #expect(empty.error.contains("COHORLY_FLAG_SECRET is set but empty"))
    }

    @Test func withoutASecretServeSaysTheAPIIsOpenToEveryLocalUser() async throws {
        let server = try await Server(["--data", temporaryDirectory().path])
        #expect(server.get("/api/events") == 200)
        let result = try #require(await server.stop())
        #expect(result.status == 0)
        #expect(
            result.error.contains("/api and /admin (events, crashes, uploads, faults) are open to every local user"))
    }

    @Test func theSecretComesFromAFileAndRefusalsAreLoggedWithoutIt() async throws {
        let directory = temporaryDirectory()
        let secretFile = directory.appendingPathComponent("secret")
        try Data("file-s3cret\n".utf8).write(to: secretFile)
        let server = try await Server([
            "--data", directory.appendingPathComponent("data").path, "--auth-token-file", secretFile.path,
        ])
        #expect(server.get("/api/events") == 401)
        #expect(server.get("/api/events", headers: [("Authorization", "Bearer guess-9f3")]) == 401)
        #expect(server.get("/api/events", headers: [("Authorization", "bearer file-s3cret")]) == 200)
        let result = try #require(await server.stop())
        #expect(!result.error.contains("open to every local user"))
        let refusals = result.error.split(separator: "\n").filter { $0.contains(" 401 GET /api/events from 127.0.0.1") }
        #expect(refusals.count == 2)
        #expect(!result.error.contains("s3cret") && !result.error.contains("guess-9f3"))
    }

    @Test func theSecretComesFromTheEnvironmentAndLogRequestsLogsAll() async throws {
        let server = try await Server(
            ["--data", temporaryDirectory().path, "--log-requests"], environment: ["COHORLY_AUTH_TOKEN": "env-s3cret"])
        #expect(server.get("/api/events", headers: [("Authorization", "Bearer env-s3cret")]) == 200)
        let result = try #require(await server.stop())
        #expect(result.error.contains("cohorly: 200 GET /api/events from 127.0.0.1"))
        #expect(!result.error.contains("env-s3cret"))
    }

    @Test func twoCollectorsRefuseToShareADataDirectory() async throws {
        let data = temporaryDirectory()
        let first = try await Server(["--data", data.path])
        let second = try await CLITests.run(["serve", "--port", "0", "--data", data.path])
        #expect(second.status == 1)
        #expect(second.error.contains("another collector (pid \(first.process.processIdentifier)) is using it"))
        #expect(first.get("/health") == 200)
        #expect(await first.stop()?.status == 0)
        // Once the first has stopped, the directory is free again.
        let third = try await Server(["--data", data.path])
        #expect(third.get("/health") == 200)
        #expect(await third.stop()?.status == 0)
    }

    @Test func sigtermStopsServeWhateverItsRequestsAreDoing() async throws {
        let server = try await Server(["--data", temporaryDirectory().path])
        // A request held by an injected 10-minute delay, and a client that sent half a body and went quiet.
        let fault = TransportRequest(
            url: try #require(URL(string: server.host + "/admin/faults")), method: "POST", headers: [],
            body: Array(#"{"delay_ms":600000}"#.utf8), timeout: 5, connectTimeout: 5)
        guard case .http(200, _, _) = CurlTransport().send(fault) else {
            Issue.record("cannot inject the fault")
            return
        }
        let held = TransportRequest(
            url: try #require(URL(string: server.host + "/track")), method: "POST",
            headers: [("Content-Type", "application/json"), ("X-Cohorly-Token", "t")],
            body: Array(#"{"event":"e","properties":{"distinct_id":"u"}}"#.utf8), timeout: 30, connectTimeout: 5)
        DispatchQueue.global().async { _ = CurlTransport().send(held) }
        let port = try #require(URL(string: server.host)?.port.flatMap { UInt16(exactly: $0) })
        let quiet = try HeldConnectionTests.RawConnection(port: port)
        quiet.write(
            "POST /track HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        )
        let result = try #require(await server.stop())
        #expect(result.status == 0)
    }

    /// A request blocked where stopping cannot reach it: its insert waits in SQLite's busy handler (up to 5 s) for
    /// a write lock another process holds. Stopping the server (closing its sockets, joining its threads) would
    /// wait for it; the cut-off ends the process within a second instead, and the database stays whole.
    @Test func sigtermCutsShortARequestThatStoppingCannotInterrupt() async throws {
        let data = temporaryDirectory()
        let server = try await Server(["--data", data.path, "--token", "t"])
        let database = try SQLiteDatabase(path: data.appendingPathComponent("collector.sqlite").path)
        try database.execute("BEGIN IMMEDIATE")
        let idleThreads = server.threadCount
        let held = TransportRequest(
            url: try #require(URL(string: server.host + "/track")), method: "POST",
            headers: [("Content-Type", "application/json"), ("X-Cohorly-Token", "t")],
            body: Array(#"{"event":"e","properties":{"distinct_id":"u"}}"#.utf8), timeout: 30, connectTimeout: 5)
        DispatchQueue.global().async { _ = CurlTransport().send(held) }
        #expect(server.waitForASleepingThread(moreThan: idleThreads), "the insert never waited for the lock")
        let result = try #require(await server.stop())
        try database.execute("ROLLBACK")
        #expect(result.status == 0)
        #expect(result.output.contains("requests still running were cut short"), "\(result.output)")
        #expect(try CollectorStore(directory: data).eventCount() == 0)
    }
}
