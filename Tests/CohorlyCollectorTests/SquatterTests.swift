import CohorlyCollectorAPI
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// A neighbour who binds the collector's address first (any local user can take 127.0.0.1:4000 before `cohorly
/// serve` starts) must not get the admin secret from the CLI: the CLI asks the server to prove it holds the secret
/// before sending anything, and never sends the secret itself (CollectorCredential.swift).
@Suite struct SquatterTests {
    static let secret = "squatter-must-not-see-this"

    /// A plain loopback HTTP server standing in for the squatter: answers every request `200 {}` (the challenge with
    /// a made-up proof) and records every request whole.
    final class Squatter: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [HTTPRequest] = []
        private var server: HTTPServer?
        private(set) var port: UInt16 = 0

        init() throws {
            let server = HTTPServer(maxBodyBytes: 64 << 20) { [weak self] request in
                self?.lock.withLock { self?.seen.append(request) }
                let proof = String(repeating: "0", count: 64)
                let body = request.path == "/api/auth/challenge" ? #"{"status":1,"proof":"\#(proof)"}"# : "{}"
                return HTTPResponse(status: 200, body: Array(body.utf8))
            }
            self.server = server
            port = try server.start(address: "127.0.0.1", port: 0, memoryLimit: 64 << 10, timeout: 10, perClient: 16)
        }

        var url: String { "http://127.0.0.1:\(port)" }
        var requests: [HTTPRequest] { lock.withLock { seen } }
        /// Everything received, as text: request lines, headers, bodies.
        var received: String {
            requests.map { request in
                "\(request.method) \(request.path) \(request.query)\n"
                    + request.headers.map { "\($0): \($1)" }.joined(separator: "\n") + "\n"
                    + String(decoding: request.body, as: UTF8.self)
            }.joined(separator: "\n")
        }

        func stop() { server?.stop() }
    }

    @Test func theCLIRefusesASquatterAndNeverSendsItTheSecret() async throws {
        let squatter = try Squatter()
        defer { squatter.stop() }
        let environment = ["COHORLY_AUTH_TOKEN": Self.secret, "COHORLY_RETRY_DELAY_MS": "1"]

        let list = try await CLITests.run(["crashes", "list", "--host", squatter.url], environment: environment)
        #expect(list.status == 1)
        #expect(list.error.contains("did not prove it holds the collector's secret"), "\(list.error)")
        #expect(squatter.requests.map(\.path) == ["/api/auth/challenge"])  // and nothing after it

        let program = try SplitProgram.get()
        let upload = try await CLITests.run(
            ["debug-files", "upload", program.full, "--release", "r", "--host", squatter.url],
            environment: environment)
        #expect(upload.status == 1)
        #expect(upload.error.contains("did not prove it holds the collector's secret"), "\(upload.error)")
        // The file list (check) and the file (PUT) never went to it.
        #expect(squatter.requests.map(\.path) == ["/api/auth/challenge", "/api/auth/challenge"])
        #expect(!squatter.received.contains(Self.secret), "\(squatter.received)")
        #expect(squatter.received.lowercased().contains("authorization: cohorly-hmac "))
    }

    @Test func theRealCollectorProvesItselfAndACapturedCredentialIsUselessToIt() async throws {
        let collector = try startCollector { $0.adminToken = Self.secret }
        let squatter = try Squatter()
        defer { squatter.stop() }
        let environment = ["COHORLY_AUTH_TOKEN": Self.secret]
        let list = try await CLITests.run(
            ["crashes", "list", "--host", collector.baseURL.absoluteString, "--json"], environment: environment)
        #expect(list.status == 0, "\(list.error)")
        // Bearer keeps working for curl and scripts.
        #expect(
            send(collector, "GET", "/api/crashes", headers: [("Authorization", "Bearer \(Self.secret)")]).status == 200)

        // What the squatter captured does not open the collector: not relayed as is (another port in Host), not
        // with Host rewritten (the MAC covers it).
        _ = try await CLITests.run(["crashes", "list", "--host", squatter.url], environment: environment)
        let captured = try #require(squatter.requests.first?.header("Authorization"))
        let relayed = send(collector, "GET", "/api/crashes", headers: [("Authorization", captured)])
        #expect(relayed.status == 401, "\(relayed.text)")  // libcurl's Host: the collector's own
        let asIs = send(
            collector, "GET", "/api/crashes",
            headers: [("Authorization", captured), ("Host", "127.0.0.1:\(squatter.port)")])
        #expect(asIs.status == 421, "\(asIs.text)")
    }

    /// A collector without a secret cannot prove one: a command given a secret stops and says why.
    @Test func aSecretIsNotOfferedToACollectorWithoutOne() async throws {
        let collector = try startCollector()
        let list = try await CLITests.run(
            ["crashes", "list", "--host", collector.baseURL.absoluteString], environment: ["COHORLY_AUTH_TOKEN": "s"])
        #expect(list.status == 1)
        #expect(list.error.contains("it says it has no secret; if it is your collector, run without"), "\(list.error)")
    }

    /// A credential is taken once, within its time window, for its method and host only.
    @Test func aCredentialIsTakenOnceForItsMethodAndHost() throws {
        let credentials = RequestCredentials()
        let now: Int64 = 1_800_000_000
        func request(_ method: String, host: String, time: Int64) throws -> HTTPRequest {
            let authorization = try CollectorCredential.authorization(
                secret: Self.secret, method: method, host: host, time: time)
            return HTTPRequest(
                method: method, path: "/api/crashes", headers: ["authorization": authorization, "host": host])
        }
        let good = try request("GET", host: "127.0.0.1:4000", time: now)
        #expect(credentials.accepts(good, secret: Self.secret, now: now))
        #expect(!credentials.accepts(good, secret: Self.secret, now: now))  // replayed
        var otherMethod = try request("GET", host: "127.0.0.1:4000", time: now)
        otherMethod.method = "DELETE"
        #expect(!credentials.accepts(otherMethod, secret: Self.secret, now: now))
        var otherHost = try request("GET", host: "127.0.0.1:4000", time: now)
        otherHost.headers["host"] = "127.0.0.1:4001"
        #expect(!credentials.accepts(otherHost, secret: Self.secret, now: now))
        #expect(!credentials.accepts(try request("GET", host: "h", time: now - 301), secret: Self.secret, now: now))
        #expect(!credentials.accepts(try request("GET", host: "h", time: now), secret: "other", now: now))
        #expect(credentials.accepts(try request("GET", host: "h", time: now - 300), secret: Self.secret, now: now))
    }
}
