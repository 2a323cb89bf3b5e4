import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

/// `cohorly issues list|show|resolve|reopen|mute` as a real process against a loopback collector.
@Suite struct IssuesCLITests {
    static func exception(_ insertId: String, type: String, function: String, release: String, user: String)
        -> CohorlyValue
    {
        let frames: CohorlyValue = [
            [
                "platform": "native", "instruction_addr": "0x5555000012a0", "image_addr": "0x555500000000",
                "module": "Shop", "in_app": true, "function": .string(function), "instruction_addr_kind": "pc",
            ]
        ]
        return [
            "event": "$exception",
            "properties": [
                "distinct_id": .string(user), "$insert_id": .string(insertId), "time": 1_800_000_000_000,
                "release": .string(release), "$exception_level": "fatal",
                "$exception_list": [
                    [
                        "type": .string(type), "value": "boom", "mechanism": ["type": "swift_fatal", "handled": false],
                        "stacktrace": ["type": "raw", "frames": frames],
                    ]
                ],
            ],
        ]
    }

    @Test func issuesAreListedShownAndChanged() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let batch: CohorlyValue = [
            Self.exception("e1", type: "Fatal error", function: "Shop.pay()", release: "1.0.0", user: "a"),
            Self.exception("e2", type: "Fatal error", function: "Shop.pay()", release: "1.1.0", user: "b"),
            Self.exception("e3", type: "Fatal error", function: "Shop.ship()", release: "1.1.0", user: "a"),
        ]
        #expect(send(collector, "/track", body: batch.jsonString).status == 200)

        let list = try await CLITests.run(["issues", "list", "--host", host, "--sort", "occurrences"])
        #expect(list.status == 0, "\(list.error)")
        let rows = list.output.split(separator: "\n").map(String.init)
        #expect(rows.count == 3, "\(list.output)")
        #expect(rows.first?.hasPrefix("ID") == true)
        #expect(
            rows[1].contains("open") && rows[1].contains("1.0.0 – 1.1.0")
                && rows[1].hasSuffix("Fatal error: boom (in Shop.pay())"))
        let id = try #require(rows[1].split(separator: " ").first.map(String.init))

        let json = try await CLITests.run(["issues", "list", "--host", host, "--json", "--release", "1.0.0"])
        let issues = try #require(CohorlyValue(json: json.output)?["issues"]?.arrayValue)
        #expect(issues.count == 1)
        #expect(issues.first?["occurrences"] == 2)
        #expect(issues.first?["users"] == 2)

        let shown = try await CLITests.run(["issues", "show", id, "--host", host])
        #expect(shown.status == 0, "\(shown.error)")
        #expect(
            shown.output.hasPrefix("Issue \(id) (ISSUE-1): Fatal error: boom (in Shop.pay())\nState: open\nApp: -\n"),
            "\(shown.output)")
        #expect(shown.output.contains("Occurrences: 2 from 2 user(s)\n"))
        #expect(shown.output.contains("Per release: 1.0.0: 1, 1.1.0: 1\n"))
        #expect(shown.output.contains("Latest occurrence:\nCrash: Fatal error: boom"))
        #expect(shown.output.contains("Shop.pay()") || shown.output.contains("pay()"))

        let resolved = try await CLITests.run(["issues", "resolve", id, "--in-release", "1.1.0", "--host", host])
        #expect(resolved.status == 0, "\(resolved.error)")
        #expect(
            resolved.output
                == "Issue \(id) (ISSUE-1): Fatal error: boom (in Shop.pay())\nState: resolved in release 1.1.0\n")
        let state = try await CLITests.run(["issues", "list", "--host", host, "--state", "resolved", "--json"])
        #expect(CohorlyValue(json: state.output)?["count"] == 1)
        let muted = try await CLITests.run(["issues", "mute", id, "--occurrences", "3", "--host", host])
        #expect(muted.output.hasSuffix("State: muted for 3 more occurrences\n"), "\(muted.output)")
        let until = try await CLITests.run(["issues", "mute", id, "--until", "2999-01-01", "--host", host])
        #expect(until.output.hasSuffix("State: muted until 2999-01-01T00:00:00Z\n"), "\(until.output)")
        let reopened = try await CLITests.run(["issues", "reopen", id, "--host", host])
        #expect(reopened.output.hasSuffix("State: open\n"))
        let history = try await CLITests.run(["issues", "show", id, "--host", host])
        #expect(history.output.contains("open → resolved (resolved in release 1.1.0)"), "\(history.output)")
        #expect(history.output.contains("muted → open (reopened)"))
    }

    @Test func badInputIsAClearErrorWithANonZeroExit() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let unknown = try await CLITests.run(["issues", "show", "99", "--host", host])
        #expect(unknown.status == 1)
        #expect(unknown.error == "cohorly: \(host) answered 404: no issue with id 99\n")
        let resolveUnknown = try await CLITests.run(["issues", "resolve", "99", "--host", host])
        #expect(resolveUnknown.status == 1)
        #expect(resolveUnknown.error == "cohorly: \(host) answered 404: no issue with id 99\n")
        let notANumber = try await CLITests.run(["issues", "show", "abc", "--host", host])
        #expect(notANumber.status == 2)
        #expect(notANumber.error.hasPrefix("cohorly: invalid issue ID 'abc'"))
        let badDate = try await CLITests.run(["issues", "mute", "1", "--until", "next tuesday", "--host", host])
        #expect(badDate.status == 2)
        #expect(badDate.error.hasPrefix("cohorly: invalid --until 'next tuesday' (expected a date such as 2026-12-31"))
        let noEnd = try await CLITests.run(["issues", "mute", "1", "--host", host])
        #expect(noEnd.status == 2)
        let past = try await CLITests.run(["issues", "mute", "1", "--until", "2001-01-01", "--host", host])
        #expect(past.status == 1, "refused by the collector (a date in the past, or no issue 1)")
        let badState = try await CLITests.run(["issues", "list", "--state", "closed", "--host", host])
        #expect(badState.status == 2)
        #expect(badState.error.contains("expected one of: open, resolved, regressed, muted"))
        let badSince = try await CLITests.run(["issues", "list", "--since", "yesterday", "--host", host])
        #expect(badSince.status == 2)
        let since = try await CLITests.run(["issues", "list", "--since", "24h", "--host", host])
        #expect(since.status == 0)
        #expect(since.output == "no issues match\n")
    }

    @Test func listsOneAppSearchesAndShowsAnIssueByItsShortId() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let batch: CohorlyValue = [
            TwoAppCrashes.event("s1", app: "Shop", function: "Cart.total()", release: "Shop@1.2.0", user: "a"),
            TwoAppCrashes.event("t1", app: "Till", function: "Cart.total()", release: "Till@1.0.0", user: "b"),
            TwoAppCrashes.event(
                "t2", app: "Till", function: "Receipt.print()", release: "Till@1.1.0", user: "b", value: "paper out"),
        ]
        #expect(send(collector, "/track", body: batch.jsonString).status == 200)

        let till = try await CLITests.run(["issues", "list", "--host", host, "--app", "Till"])
        #expect(till.status == 0, "\(till.error)")
        let rows = till.output.split(separator: "\n").map(String.init)
        #expect(rows.first?.hasPrefix("ID     SHORT ID       STATE") == true, "\(till.output)")
        #expect(rows.count == 3 && rows.dropFirst().allSatisfy { $0.contains(" TILL-") }, "\(till.output)")

        let found = try await CLITests.run(["issues", "list", "--host", host, "--query", "paper function:Receipt"])
        #expect(found.status == 0, "\(found.error)")
        #expect(found.output.split(separator: "\n").count == 2 && found.output.contains("TILL-2"), "\(found.output)")
        let json = try await CLITests.run(["issues", "list", "--host", host, "--json", "--query", "release:1.2.0"])
        let issues = try #require(CohorlyValue(json: json.output)?["issues"]?.arrayValue, "\(json.output)")
        #expect(issues.map { $0["short_id"] } == ["SHOP-1"])

        let shown = try await CLITests.run(["issues", "show", "till-2", "--host", host])
        #expect(shown.status == 0, "\(shown.error)")
        #expect(shown.output.contains("(TILL-2): Fatal error: paper out (in Receipt.print())\n"), "\(shown.output)")
        #expect(shown.output.contains("\nApp: Till\n"))
        let unknown = try await CLITests.run(["issues", "show", "TILL-9", "--host", host])
        #expect(unknown.status == 1)
        #expect(unknown.error == "cohorly: \(host) answered 404: no issue with short id TILL-9\n", "\(unknown.error)")

        // A query that does not parse: the term named, exit 2, nothing sent.
        let bad = try await CLITests.run(["issues", "list", "--host", host, "--query", "crash is:closed"])
        #expect(bad.status == 2)
        #expect(bad.error.hasPrefix("cohorly: --query: invalid search term 'is:closed': unknown state"), "\(bad.error)")
    }
}
