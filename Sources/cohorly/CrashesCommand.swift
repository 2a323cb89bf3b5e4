import CohorlySymbols
import Foundation

/// `cohorly crashes list`: the crashes a collector holds, newest first.
enum CrashesListCommand: Command {
    static let words = ["crashes", "list"]
    static let summary = "List the crashes a collector received."
    static let help = """
        USAGE: cohorly crashes list [--host URL] [--limit N] [--auth-token-file F] [--json]

        OPTIONS:
          --host URL        The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
          --limit N         At most N crashes, newest first (default 100).
          --auth-token-file F  The collector's read secret, from a file (default COHORLY_AUTH_TOKEN).
          --json            Print the collector's JSON answer.
          -h, --help        Show this help.

        EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json"], options: ["--host", "--limit", "--auth-token", "--auth-token-file"])
        } catch {
            return Console.usageError(error.reason, command: "crashes list")
        }
        guard parsed.positionals.isEmpty else {
            return Console.usageError("unexpected argument '\(parsed.positionals[0])'", command: "crashes list")
        }
        return CollectorRequest.read(parsed, command: "crashes list", path: "/api/crashes") { text, request in
            guard let list = try? JSONDecoder().decode(CrashList.self, from: Data(text.utf8)) else {
                Console.error("cohorly: unexpected answer from \(request.host)")
                return .failure
            }
            print(
                [
                    "TIME (UTC)".padded(24), "RELEASE".padded(20), "DISTINCT ID".padded(36), "INSERT ID".padded(36),
                    "CRASH",
                ]
                .joined(separator: " "))
            for crash in list.crashes {
                let reason = [crash.type, crash.value].compactMap { $0 }.joined(separator: ": ")
                print(
                    [
                        Timestamp.iso8601(milliseconds: crash.time).padded(24), (crash.release ?? "-").padded(20),
                        crash.distinctId.padded(36), (crash.insertId ?? "-").padded(36), reason,
                    ].joined(separator: " "))
            }
            return .success
        }
    }

    struct CrashList: Decodable {
        var crashes: [Summary]
    }

    struct Summary: Decodable {
        var insertId: String?
        var time: Int64
        var distinctId: String
        var release: String?
        var type: String?
        var value: String?

        enum CodingKeys: String, CodingKey {
            case time, release, type, value
            case insertId = "insert_id"
            case distinctId = "distinct_id"
        }
    }
}

/// `cohorly crashes show ID`: one crash, symbolicated by the collector, printed like a Swift backtrace.
enum CrashesShowCommand: Command {
    static let words = ["crashes", "show"]
    static let summary = "Show one crash, symbolicated, like a Swift backtrace."
    static let help = """
        USAGE: cohorly crashes show INSERT_ID [--host URL] [--auth-token-file F] [--json]

        The collector symbolicates the crash with the debug files uploaded to it (cohorly debug-files upload):
        the reason first (from the Swift message, the C++ exception, the DWARF `Swift runtime failure` frame, or
        the signal), then every thread; modules whose debug file is missing stay raw and are named at the end.

        OPTIONS:
          --host URL        The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
          --auth-token-file F  The collector's read secret, from a file (default COHORLY_AUTH_TOKEN).
          --json            Print the collector's JSON answer.
          -h, --help        Show this help.

        EXIT STATUS: 0 success, 1 no such crash or the collector could not be reached, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json"], options: ["--host", "--auth-token", "--auth-token-file"])
        } catch {
            return Console.usageError(error.reason, command: "crashes show")
        }
        guard parsed.positionals.count == 1, let id = parsed.positionals.first else {
            return Console.usageError("expected one INSERT_ID", command: "crashes show")
        }
        let encoded = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id
        return CollectorRequest.read(parsed, command: "crashes show", path: "/api/crashes/" + encoded) {
            text, request in
            guard let shown = try? JSONDecoder().decode(ShownCrash.self, from: Data(text.utf8)) else {
                Console.error("cohorly: unexpected answer from \(request.host)")
                return .failure
            }
            var header = ["Insert id: \(id)", "Time: \(Timestamp.iso8601(milliseconds: shown.time))"]
            if let release = shown.release {
                header.append("Release: \(release)" + (shown.dist.map { " (\($0))" } ?? ""))
            }
            header.append("User: \(shown.distinctId)")
            if let os = shown.os { header.append("OS: \(os) \(shown.osVersion ?? "") \(shown.arch ?? "")") }
            print(shown.crash.text(header: header))
            return .success
        }
    }

    struct ShownCrash: Decodable {
        var time: Int64
        var distinctId: String
        var release: String?
        var dist: String?
        var os: String?
        var osVersion: String?
        var arch: String?
        var crash: SymbolicatedCrash

        enum CodingKeys: String, CodingKey {
            case time, release, dist, os, arch, crash
            case distinctId = "distinct_id"
            case osVersion = "os_version"
        }
    }
}

/// Unix milliseconds as `2026-11-30T08:39:20.763Z`.
enum Timestamp {
    static func iso8601(milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}

extension String {
    func padded(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
