import CohorlySymbols
import Foundation
import Testing

/// `cohorly symbolicate` given `$exception` events instead of a report: the same crash as the report fixture
/// (`shop` loaded at 0x555555554000, trapping in `Cart.checkout` inlined into `run`), in PostHog's native shape.
@Suite struct SymbolicateEventTests {
    static let base: UInt64 = 0x5555_5555_4000

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

    /// The fixture report's crash as `$exception` properties: frames oldest first, crash site last, an inline
    /// frame after its physical frame, a frame in an image no debug file exists for, and one whose image is not
    /// among `$debug_images` at all.
    static func properties(_ fixtures: CLIFixtures) throws -> [String: Any] {
        let trap = base + (try fixtures.trapAddress())
        let main = try #require(try fixtures.symbol("main"))
        let buildId = try #require(try ObjectInfo(path: fixtures.path("shop")).codeId)
        func frame(_ address: UInt64, _ image: UInt64, _ module: String, inline: Bool = false) -> [String: Any] {
            var frame: [String: Any] = [
                "platform": "native", "instruction_addr": hex(address), "image_addr": hex(image), "module": module,
                "in_app": module == "shop",
            ]
            if inline { frame["inline"] = true }
            return frame
        }
        let crashed: [[String: Any]] = [
            frame(0x7f00_dead_beef, 0x7f00_de00_0000, "libgone.so.1"),
            frame(base + main + 0x11, base, "shop"),
            frame(trap, base, "shop"), frame(trap, base, "shop", inline: true),
        ]
        return [
            "$exception_level": "fatal", "$insert_id": "0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f",
            "release": "shop@1.0.0",
            "$exception_list": [
                [
                    "type": "SIGILL", "value": "Illegal instruction at \(hex(trap))",
                    "mechanism": ["type": "signal", "handled": false, "synthetic": false],
                    "thread_id": 4242, "stacktrace": ["type": "raw", "frames": crashed],
                ]
            ],
            "$exception_threads": [
                [
                    "thread_id": 4250, "name": "worker",
                    "stacktrace": [
                        "type": "raw",
                        "frames": [
                            frame(base + main + 0x11, base, "shop"),
                            frame(0x7f11_0000_2345, 0x7f11_0000_0000, "libnowhere.so"),
                        ],
                    ],
                ]
            ],
            "$debug_images": [
                [
                    "type": "elf", "code_file": fixtures.path("shop"), "code_id": buildId,
                    "debug_id": "unused-here", "image_addr": hex(base), "image_size": 0x8000, "arch": "x86_64",
                ],
                [
                    "type": "elf", "code_file": "/usr/lib/cohorly-missing/libgone.so.1",
                    "code_id": "00112233445566778899aabbccddeeff00112233", "image_addr": "0x7f00de000000",
                    "image_size": 0x100_0000,
                ],
            ],
        ]
    }

    static func write(_ name: String, _ value: Any) throws -> String {
        let path = Scratch.path(name)
        try JSONSerialization.data(withJSONObject: value).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The lines from the first thread on (the crash's frames), which a report and an event must print alike.
    static func frameLines(_ text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return Array(lines.drop { !$0.hasPrefix("Thread ") })
    }

    @Test func eventIsSymbolicatedLikeTheReport() throws {
        let fixtures = try CLIFixtures.get()
        let event: [String: Any] = [
            "event": "$exception", "distinct_id": "user-1", "properties": try Self.properties(fixtures),
        ]
        let result = try CLI.run(["symbolicate", try Self.write("event.json", event)])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Crash: Swift runtime failure: Division by zero")
        #expect(lines.contains("Event: 0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f"))
        #expect(lines.contains("Release: shop@1.0.0"))
        let frame0 = try #require(lines.first { $0.hasPrefix("#0  0x") })
        #expect(frame0.contains(" shop run(_:) at "))  // names simplified, as in a report
        #expect(frame0.contains("fixtures/symbols/shop.swift:28:"))
        // The inline frame of the event is not a frame of its own: three frames, crash site first.
        #expect(lines.filter { $0.hasPrefix("#") }.count == 5)
        #expect(lines.contains { $0.hasPrefix("#1  0x") && $0.contains(" shop main at ") })
        #expect(lines.contains { $0.hasPrefix("#2  0x00007f00deadbeef libgone.so.1 + 0xadbeee") })
        // A frame whose image is not among $debug_images stays raw, its module named.
        #expect(lines.contains("#0  0x00007f1100002345 libnowhere.so + 0x2345"))
        #expect(lines.contains { $0.hasPrefix("#1  0x") && $0.contains(" shop main at ") })

        // The same crash as a report prints the same crashed thread.
        let report = try SymbolicateCommandTests.temporary("event-report.json", try fixtures.report())
        let fromReport = try CLI.run(["symbolicate", report])
        let crashedFromEvent = Self.frameLines(result.stdout).prefix { !$0.isEmpty }
        let crashedFromReport = Self.frameLines(fromReport.stdout).prefix { !$0.isEmpty }
        #expect(crashedFromEvent.count > 3)
        #expect(Array(crashedFromEvent) == crashedFromReport.map { $0.replacingOccurrences(of: " \"shop\"", with: "") })
    }

    @Test func bareEventPropertiesAsJSON() throws {
        let fixtures = try CLIFixtures.get()
        let result = try CLI.run([
            "symbolicate", "--json", try Self.write("properties.json", try Self.properties(fixtures)),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["reason"] as? String == "Swift runtime failure: Division by zero")
        let missing = try #require(object["unsymbolicated_modules"] as? [[String: Any]])
        #expect(
            Set(missing.compactMap { $0["path"] as? String }) == [
                "/usr/lib/cohorly-missing/libgone.so.1", "libnowhere.so",
            ])
    }

    /// `cohorly events list --json` prints `{"events": [...], "count", "total"}`; PostHog's API answers
    /// `{"results": [...]}`; both, and a bare array, give one crash per `$exception` event, other events ignored.
    @Test(arguments: ["events", "results", ""])
    func eventLists(_ key: String) throws {
        let fixtures = try CLIFixtures.get()
        let properties = try Self.properties(fixtures)
        var second = properties
        second["$insert_id"] = "second"
        let list: [[String: Any]] = [
            ["event": "$pageview", "properties": ["$current_url": "x"]],
            ["event": "$exception", "properties": properties],
            ["event": "$exception", "properties": second],
        ]
        let document: Any = key.isEmpty ? list : [key: list, "count": 3]
        let path = try Self.write("list-\(key).json", document)
        let text = try CLI.run(["symbolicate", path])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.components(separatedBy: "Crash: Swift runtime failure: Division by zero").count == 3)
        #expect(text.stdout.contains("Event: second"))
        let json = try CLI.run(["symbolicate", "--json", path])
        let crashes = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(crashes.count == 2)
    }

    @Test(arguments: [
        (
            "{\"event\": \"$pageview\", \"properties\": {}}",
            "neither a crash report (format cohorly-crash/2) nor an $exception event"
        ),
        ("{\"events\": [{\"event\": \"$pageview\", \"properties\": {}}]}", "no $exception event among the 1 events"),
        ("[1, 2]", "no $exception event among the 2 events"),
    ])
    func notACrash(_ json: String, _ reason: String) throws {
        let path = try SymbolicateCommandTests.temporary("not-a-crash-\(json.count)-\(reason.count).json", json)
        let result = try CLI.run(["symbolicate", path])
        #expect(result.status == 1)
        #expect(result.stderr == "cohorly: \(path): \(reason)\n")
    }
}
