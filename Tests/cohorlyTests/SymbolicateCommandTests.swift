import CohorlySymbols
import Foundation
import Testing

@Suite struct SymbolicateCommandTests {
    static func temporary(_ name: String, _ contents: String) throws -> String {
        let path = Scratch.path(name)
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func reportIsPrintedLikeABacktrace() throws {
        let fixtures = try CLIFixtures.get()
        let report = try Self.temporary("report.json", try fixtures.report())
        let result = try CLI.run(["symbolicate", report])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
        // Crash reason first: the trap's inline frame names it.
        #expect(lines.first == "Crash: Swift runtime failure: Division by zero")
        #expect(
            lines.contains(
                "Signal: SIGILL (4), code 2, address 0x"
                    + String(0x5555_5555_4000 + (try fixtures.trapAddress()), radix: 16)))
        #expect(lines.contains("Thread 4242 \"shop\" crashed:"))
        let frame0 = try #require(lines.first { $0.hasPrefix("#0  0x") })
        // At -O, checkout is inlined into run: the physical frame is run, at the inlined call.
        #expect(frame0.contains(" shop run(_:) at "))
        #expect(frame0.contains("fixtures/symbols/shop.swift:28:"))
        // The inlined frames are indented under frame 0, outermost call first, down to the trap.
        let index0 = try #require(lines.firstIndex(of: frame0))
        #expect(
            lines[index0 + 1].hasPrefix(
                "      [inlined] Cart.checkout(discount:) at "))
        #expect(lines[index0 + 1].contains("fixtures/symbols/shop.swift:13:"))
        #expect(
            lines[index0 + 2].hasPrefix("        [inlined] Swift runtime failure: Division by zero"))
        // Frame 1 is a return address inside main; frame 2 is in a module that has no debug file.
        let frame1 = try #require(lines.first { $0.hasPrefix("#1  0x") })
        #expect(frame1.contains(" shop main at "))
        let frame2 = try #require(lines.first { $0.hasPrefix("#2  0x00007f00deadbeef") })
        #expect(frame2.hasSuffix("libgone.so.1 + 0xadbeee"))
        #expect(lines.contains("Thread 4250 \"worker\":"))
        #expect(lines.contains("  … (truncated)"))
        #expect(lines.contains("  (no frames: the thread did not answer)"))
        #expect(
            lines.contains {
                $0.hasPrefix(
                    "Unsymbolicated modules (no usable debug file found): /usr/lib/cohorly-missing/libgone.so.1")
            })
        #expect(lines.last(where: { !$0.isEmpty })?.hasPrefix("Hint: give the directory holding their debug") == true)
    }

    @Test func reportAsJSON() throws {
        let fixtures = try CLIFixtures.get()
        let report = try Self.temporary("report-json.json", try fixtures.report(base: 0x7f12_3400_0000))
        let result = try CLI.run(["symbolicate", "--json", report])
        #expect(result.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["reason"] as? String == "Swift runtime failure: Division by zero")
        #expect(object["reason_source"] as? String == "dwarf")
        let threads = try #require(object["threads"] as? [[String: Any]])
        #expect(threads.count == 3)
        let frames = try #require(threads.first?["frames"] as? [[String: Any]])
        #expect(frames.count == 3)
        let first = try #require(frames.first?["symbols"] as? [[String: Any]])
        #expect(first.first?["function"] as? String == "Swift runtime failure: Division by zero")
        #expect(first.first?["inlined"] as? Bool == true)
        #expect(first.last?["raw_function"] as? String == "$s4shop3runySiSaySSGF")
        #expect(
            first.dropLast().last?["raw_function"] as? String == "$s4shop4CartC8checkout8discountS2i_tF")
        // Frame 0 is looked up exactly, frame 1 at the return address - 1.
        let trap = try fixtures.trapAddress()
        #expect(frames[0]["file_address"] as? String == "0x" + String(trap, radix: 16))
        let main = try #require(try fixtures.symbol("main"))
        #expect(frames[1]["file_address"] as? String == "0x" + String(main + 0x10, radix: 16))
        #expect((frames[2]["symbols"] as? [Any])?.isEmpty == true)
        let missing = try #require(object["unsymbolicated_modules"] as? [[String: Any]])
        #expect(missing.map { $0["path"] as? String } == ["/usr/lib/cohorly-missing/libgone.so.1"])
    }

    @Test func strippedModuleUsesItsDebugFile() throws {
        let fixtures = try CLIFixtures.get()
        let report = try fixtures.report().replacingOccurrences(
            of: fixtures.path("shop") + "\"", with: fixtures.path("shop.stripped") + "\"")
        let path = try Self.temporary("report-stripped.json", report)
        let result = try CLI.run(["symbolicate", path])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Crash: Swift runtime failure: Division by zero"))
        #expect(
            result.stdout.contains("shop.stripped run(_:) at "))
    }

    @Test func debugDirFindsAMovedDebugFile() throws {
        let fixtures = try CLIFixtures.get()
        // The module path does not exist here; the debug file sits under --debug-dir in a nested folder.
        let store = Scratch.path("store")
        try FileManager.default.createDirectory(
            atPath: store + "/a/b", withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: store + "/a/b/whatever")
        try FileManager.default.copyItem(
            atPath: fixtures.path("shop.debug"), toPath: store + "/a/b/whatever")
        let report = try fixtures.report().replacingOccurrences(
            of: fixtures.path("shop") + "\"", with: "/opt/gone/shop\"")
        let path = try Self.temporary("report-moved.json", report)
        let without = try CLI.run(["symbolicate", path])
        #expect(without.stdout.hasPrefix("Crash: SIGILL: Illegal instruction at 0x"))
        #expect(without.stdout.contains("/opt/gone/shop (build id"))
        let with = try CLI.run(["symbolicate", path, "--debug-dir", store])
        #expect(with.stdout.hasPrefix("Crash: Swift runtime failure: Division by zero"))
    }

    @Test(arguments: [
        ("corrupt.json", "not a crash report (invalid JSON"),
        ("truncated.json", "not a crash report (invalid JSON"),
        ("wrong-format.json", "unsupported report format 'cohorly-crash/9'"),
        ("does-not-exist.json", "cannot read"),
    ])
    func unreadableReports(_ name: String, _ reason: String) throws {
        let path = CLIFixtures.repository + "/fixtures/reports/" + name
        let result = try CLI.run(["symbolicate", path])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("cohorly: \(path): "), "\(result.stderr)")
        #expect(result.stderr.contains(reason), "\(result.stderr)")
    }

    @Test func minimalReportStaysRaw() throws {
        let result = try CLI.run([
            "symbolicate", CLIFixtures.repository + "/fixtures/reports/minimal.json",
        ])
        #expect(result.status == 0)
        #expect(result.stdout.hasPrefix("Crash: SIGSEGV: Segmentation fault: address not mapped at 0x0\n"))
        #expect(result.stdout.contains("#0  0x0000000000401000 ???"))
    }

    @Test func executableAddressesMatchTheLibrary() throws {
        let fixtures = try CLIFixtures.get()
        let trap = try fixtures.trapAddress()
        let main = try #require(try fixtures.symbol("main"))
        let addresses = ["0x" + String(trap, radix: 16), String(main, radix: 16)]
        let fromArguments = try CLI.run(["symbolicate", "--exe", fixtures.path("shop")] + addresses)
        let fromStdin = try CLI.run(
            ["symbolicate", "--exe", fixtures.path("shop")],
            input: addresses.joined(separator: "\n") + "\n\n")
        #expect(fromArguments.status == 0)
        #expect(fromArguments.stdout == fromStdin.stdout)
        let symbolicator = try ModuleSymbolicator(debugFile: fixtures.path("shop"))
        var expected = ""
        for address in [trap, main] {
            expected += "0x" + String(address, radix: 16) + "\n"
            for frame in symbolicator.symbolicate(address).frames {
                expected +=
                    (frame.function ?? "??") + "\n" + (frame.file ?? "??")
                    + ":\(frame.line):\(frame.column)\n"
            }
            expected += "\n"
        }
        #expect(fromArguments.stdout == expected)
        #expect(
            fromArguments.stdout.hasPrefix(
                "0x\(String(trap, radix: 16))\nSwift runtime failure: Division by zero\n"))
    }

    /// `--exe` reads stdin a block at a time and looks addresses up in batches, printing each batch as it is
    /// done: a list longer than one batch (4,096 addresses) and than one read (64 KiB, so lines are cut by a
    /// read's end) is answered address by address in the order given, as the library answers each alone.
    @Test func aLongAddressListOnStdinIsAnsweredInOrder() throws {
        let fixtures = try CLIFixtures.get()
        let trap = try fixtures.trapAddress()
        let main = try #require(try fixtures.symbol("main"))
        let pattern: [UInt64] = [trap, main, main + 1, 0x9a_0000, trap, main + 2, main]
        let addresses = (0..<20_000).map { pattern[($0 * 5 + $0 / 7) % pattern.count] }
        var input = ""
        for (index, address) in addresses.enumerated() {
            input += (index % 2 == 0 ? "0x" : "") + String(address, radix: 16) + (index % 13 == 0 ? "\n\n" : "\n")
        }
        #expect(input.utf8.count > 1 << 16)
        let result = try CLI.run(["symbolicate", "--exe", fixtures.path("shop")], input: input)
        let symbolicator = try ModuleSymbolicator(debugFile: fixtures.path("shop"))
        var answers: [UInt64: String] = [:]
        for address in Set(addresses) {
            var text = "0x" + String(address, radix: 16) + "\n"
            let frames = symbolicator.symbolicate(address).frames
            if frames.isEmpty { text += "??\n??:0:0\n" }
            for frame in frames {
                text += (frame.function ?? "??") + "\n" + (frame.file ?? "??") + ":\(frame.line):\(frame.column)\n"
            }
            answers[address] = text + "\n"
        }
        let expected = addresses.map { answers[$0] ?? "" }.joined()
        #expect(result.stdout == expected)
        #expect(result.status == 1)  // 0x9a0000 is in no function
        #expect(result.stderr.isEmpty)
    }

    @Test func executableErrors() throws {
        let fixtures = try CLIFixtures.get()
        let bad = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), "0x10", "zz"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("cohorly: 'zz' is not a hexadecimal address"))
        let missing = try CLI.run(["symbolicate", "--exe", "/no/such/file", "0x10"])
        #expect(missing.status == 1)
        #expect(missing.stderr == "cohorly: /no/such/file: cannot open: No such file or directory\n")
    }
}
