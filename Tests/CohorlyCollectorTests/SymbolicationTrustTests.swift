import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// A crash event comes from the network: the collector symbolicates it only with files from its own store and the
/// directories it was told to trust (`serve --debug-dir`), never with a path the event names, and never opens a
/// FIFO for a blocking read.
@Suite struct SymbolicationTrustTests {
    /// An `$exception` event with one frame at `main + 4` in an image at 0x7f0000000000 named `codeFile`.
    static func crashEvent(insertId: String, codeFile: String, buildId: String?, program: SplitProgram) throws -> String
    {
        let symbols = try SplitProgram.run("/usr/bin/nm", [program.full])
        let line = try #require(symbols.split(separator: "\n").first { $0.hasSuffix(" T main") })
        let main = try #require(UInt64(line.split(separator: " ")[0], radix: 16))
        let base: UInt64 = 0x7f00_0000_0000
        var image: [String: CohorlyValue] = [
            "code_file": .string(codeFile), "image_addr": .string("0x" + String(base, radix: 16)),
            "image_size": .string("0x100000"),
        ]
        if let buildId { image["code_id"] = .string(buildId) }
        let properties: CohorlyValue = [
            "distinct_id": "u", "$insert_id": .string(insertId),
            "$exception_list": [
                [
                    "type": "SIGSEGV", "value": "Segmentation fault", "mechanism": ["type": "signal"],
                    "stacktrace": [
                        "frames": [["instruction_addr": .string("0x" + String(base + main + 4, radix: 16))]]
                    ],
                ]
            ],
            "$debug_images": [.object(image)],
        ]
        return CohorlyValue.object(["event": "$exception", "properties": properties]).jsonString
    }

    /// The function the collector found for the crashed thread's top frame (nil: none), and the answer's status.
    static func topFunction(_ collector: Collector, _ insertId: String) -> (status: Int, function: String?) {
        let reply = send(collector, "GET", "/api/crashes/\(insertId)", headers: [])
        let frames = reply.body?["crash"]?["threads"]?.arrayValue?.first?["frames"]?.arrayValue
        return (reply.status, frames?.first?["symbols"]?.arrayValue?.last?["function"]?.stringValue)
    }

    @Test func aPathTheEventNamesIsNeverOpened() throws {
        let program = try SplitProgram.get()
        let collector = try startCollector()
        defer { collector.stop() }
        let body = try Self.crashEvent(
            insertId: "named", codeFile: program.full, buildId: program.buildId, program: program)
        #expect(send(collector, "/track", body: body).status == 200)
        let shown = Self.topFunction(collector, "named")
        #expect(shown.status == 200)
        #expect(shown.function == nil, "symbolicated from \(program.full), a path only the event named")
    }

    @Test func aTrustedDirectoryIsUsed() throws {
        let program = try SplitProgram.get()
        let collector = try startCollector { $0.extraDebugFileDirectories = [program.directory] }
        defer { collector.stop() }
        // By build id (found in the directory), and by the path when it lies in the directory.
        for (id, buildId) in [("by-id", Optional(program.buildId)), ("by-path", nil)] {
            let body = try Self.crashEvent(insertId: id, codeFile: program.full, buildId: buildId, program: program)
            #expect(send(collector, "/track", body: body).status == 200)
            #expect(Self.topFunction(collector, id).function == "main", "\(id)")
        }
    }

    /// A symbolic link inside a trusted directory pointing outside it (`link.debug -> /home/victim/app`) is not
    /// followed: neither by build id (the directory's scan) nor by the path the event names.
    @Test func aLinkOutOfATrustedDirectoryIsNotFollowed() throws {
        let program = try SplitProgram.get()
        let trusted = temporaryDirectory()
        let link = trusted.appendingPathComponent("link.debug").path
        #expect(symlink(program.full, link) == 0)
        let collector = try startCollector { $0.extraDebugFileDirectories = [trusted.path] }
        defer { collector.stop() }
        for (id, codeFile, buildId) in [
            ("link-id", "/nowhere/app", Optional(program.buildId)), ("link-path", link, nil),
        ] {
            let body = try Self.crashEvent(insertId: id, codeFile: codeFile, buildId: buildId, program: program)
            #expect(send(collector, "/track", body: body).status == 200)
            let shown = Self.topFunction(collector, id)
            #expect(shown.status == 200)
            #expect(shown.function == nil, "\(id): symbolicated through \(link) from \(program.full)")
        }
    }

    @Test func aFIFOIsNeverOpenedForABlockingRead() throws {
        let program = try SplitProgram.get()
        let directory = temporaryDirectory()
        let fifo = directory.appendingPathComponent("libfifo.so").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let collector = try startCollector { $0.extraDebugFileDirectories = [directory.path] }
        defer { collector.stop() }
        for (id, buildId) in [("fifo-id", Optional(program.buildId)), ("fifo-path", nil)] {
            let body = try Self.crashEvent(insertId: id, codeFile: fifo, buildId: buildId, program: program)
            #expect(send(collector, "/track", body: body).status == 200)
            // Answered (curl gives up after 10 s): the FIFO, even in a trusted directory, was not opened.
            #expect(Self.topFunction(collector, id).status == 200)
        }
    }

    @Test func serveRefusesAMissingDebugDirectory() async throws {
        let result = try await CLITests.run(["serve", "--port", "0", "--debug-dir", "/nonexistent/cohorly-debug"])
        #expect(result.status == 2)
        #expect(result.error.contains("--debug-dir /nonexistent/cohorly-debug is not a directory"))
    }
}
