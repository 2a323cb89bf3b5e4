import Cohorly
import Foundation
import Testing

/// `cohorly symbolicate` reads what `cohorly events list --json` prints: an `$exception` event stored by a real
/// collector, fetched by the real CLI, symbolicated against the real binary it names.
@Suite struct SymbolicateEventListTests {
    @Test func eventsListJSONIsSymbolicated() async throws {
        let program = try SplitProgram.get()
        let nm = try SplitProgram.run("/usr/bin/nm", [program.full])
        let line = nm.split(separator: "\n").first { $0.hasSuffix(" T compute") }
        let compute = try #require(line.flatMap { UInt64($0.prefix { $0 != " " }, radix: 16) })
        let base: UInt64 = 0x5600_0000_0000
        func hex(_ value: UInt64) -> CohorlyValue { .string("0x" + String(value, radix: 16)) }
        let frames: [CohorlyValue] = [
            ["platform": "native", "instruction_addr": hex(base + compute), "image_addr": hex(base), "module": "prog"]
        ]
        let properties: [String: CohorlyValue] = [
            "$exception_level": "fatal",
            "$exception_list": [
                [
                    "type": "SIGABRT", "value": "Aborted", "mechanism": ["type": "signal", "handled": false],
                    "thread_id": 7, "stacktrace": ["type": "raw", "frames": .array(frames)],
                ]
            ],
            "$debug_images": [
                [
                    "type": "elf", "code_file": .string(program.full), "code_id": .string(program.buildId),
                    "image_addr": hex(base), "image_size": 0x10000,
                ]
            ],
        ]
        let collector = try startCollector()
        defer { collector.stop() }
        let sent = send(collector, "/track", body: "[" + event("$exception", insertId: "crash-1", properties) + "]")
        #expect(sent.status == 200, "\(sent.text)")

        let listed = try await CLITests.run(["events", "list", "--host", collector.baseURL.absoluteString, "--json"])
        #expect(listed.status == 0, "\(listed.error)")
        let path = SplitProgram.scratch("events") + "/events.json"
        try listed.output.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await CLITests.run(["symbolicate", path])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.hasPrefix("Crash: SIGABRT: Aborted\n"), "\(result.output)")
        #expect(result.output.contains("Event: crash-1"))
        #expect(result.output.contains(" prog compute at "), "\(result.output)")
        #expect(result.output.contains("inline.c:"))
    }
}
