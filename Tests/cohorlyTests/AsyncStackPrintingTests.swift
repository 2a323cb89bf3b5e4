import CohorlySymbols
import Foundation
import Testing

/// `fixtures/symbols/checkout.swift` (an actor method awaited by `price`, awaited by `checkout`, awaited by
/// `main`) compiled once, and a format v2 report made from its real addresses: the crash in the actor method,
/// the anchor in `price`'s funclet, the async callers at the entries of `checkout`'s and `main`'s resume
/// funclets, two executor frames in the real Swift concurrency library.
struct AsyncFixture: Sendable {
    let binary: String
    let base: UInt64 = 0x5555_5555_0000
    let concurrencyBase: UInt64 = 0x7fff_f700_0000
    static let concurrency = "/opt/swift/usr/lib/swift/linux/libswift_Concurrency.so"
    /// File addresses: the crash site, the anchor's return address, the two async resume points.
    let crashSite: UInt64
    let anchorReturn: UInt64
    let resumePoints: [UInt64]
    let executor: [UInt64]

    static let shared: Result<AsyncFixture, CLIFixtureError> = {
        do { return .success(try build()) } catch let error as CLIFixtureError {
            return .failure(error)
        } catch {
            return .failure(CLIFixtureError(reason: "\(error)"))
        }
    }()

    static func symbols(_ path: String, dynamic: Bool = false) throws -> [String: UInt64] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nm")
        process.arguments = (dynamic ? ["-D", "--defined-only"] : []) + [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var found: [String: UInt64] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3, let address = UInt64(parts[0], radix: 16) { found[String(parts[2])] = address }
        }
        return found
    }

    private static func build() throws -> AsyncFixture {
        let binary = Scratch.path("checkout")
        try CLIFixtures.tool(
            "/opt/swift/usr/bin/swiftc",
            [
                "-Onone", "-g", "-parse-as-library", "-module-name", "checkout",
                CLIFixtures.repository + "/fixtures/symbols/checkout.swift", "-o", binary,
            ])
        let names = try symbols(binary)
        func address(_ suffix: String, containing part: String) throws -> UInt64 {
            try unwrap(names.first { $0.key.contains(part) && $0.key.hasSuffix(suffix) }?.value)
        }
        let library = try symbols(concurrency, dynamic: true)
        return AsyncFixture(
            binary: binary, crashSite: try address("tF", containing: "discountPercent"),
            anchorReturn: try address("TY1_", containing: "5price") + 0x10,
            resumePoints: [
                try address("TQ0_", containing: "8checkoutAA5cents"), try address("TQ1_", containing: "4ShopV4main"),
            ],
            executor: [try unwrap(library["swift_job_run"]) + 0x40, try unwrap(library["swift_task_switch"]) + 0x20])
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

    /// The report (format v2).
    func report() throws -> String {
        let info = try ObjectInfo(path: binary)
        let library = try ObjectInfo(path: Self.concurrency)
        func frame(_ address: UInt64, _ kind: String) -> String {
            #"{"addr":"\#(Self.hex(address))","kind":"\#(kind)"}"#
        }
        let physical = [
            frame(base + crashSite, "pc"), frame(base + anchorReturn, "return_address"),
            frame(concurrencyBase + executor[0], "return_address"),
            frame(concurrencyBase + executor[1], "return_address"),
        ]
        let async = resumePoints.map { frame(base + $0, "async_resume") }
        return """
            {"format":"cohorly-crash/2","insert_id":"a","timestamp_ms":1,"pid":1,"executable":"\(binary)",
             "mechanism":"signal","signal":{"number":5,"name":"SIGTRAP","code":1,"address":"0x0"},
             "crashed_thread":{"tid":1,"name":"worker","crashed":true,"truncated":false,
               "frames":[\(physical.joined(separator: ","))],
               "async":{"anchor":1,"stop":"task_root","frames":[\(async.joined(separator: ","))]}},
             "threads":[],"modules":[
               {"path":"\(binary)","base":"\(Self.hex(base))","size":"0x100000","build_id":"\(info.codeId ?? "")"},
               {"path":"\(Self.concurrency)","base":"\(Self.hex(concurrencyBase))","size":"0x200000",
                "build_id":"\(library.codeId ?? "")"}],
             "complete":true}
            """
    }

    /// `file:line` as llvm-symbolizer gives it for a file address of the binary (the physical function's).
    func reference(_ address: UInt64) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/opt/swift/usr/bin/llvm-symbolizer")
        process.arguments = ["--obj=\(binary)", "--no-inlines", Self.hex(address)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let location = String(decoding: data, as: UTF8.self).split(separator: "\n").dropFirst().first ?? ""
        // `file:line:column`; column 0 is printed without it.
        let parts = location.split(separator: ":")
        guard parts.count >= 2 else { return String(location) }
        return parts.count > 2 && parts[2] != "0" ? String(location) : "\(parts[0]):\(parts[1])"
    }
}

@Suite struct AsyncStackPrintingTests {
    @Test func theAsyncCallersFollowTheAnchorAndTheExecutorFoldsIntoOneLine() throws {
        let fixture = try AsyncFixture.shared.get()
        let path = try SymbolicateCommandTests.temporary("async-report.json", try fixture.report())
        let result = try CLI.run(["symbolicate", path])
        #expect(result.status == 0, "\(result.stderr)")
        let frames = result.stdout.split(separator: "\n").filter { $0.hasPrefix("#") || $0.hasPrefix("    …") }
            .map(String.init)
        try #require(frames.count == 5, "\(result.stdout)")
        #expect(frames[0].hasPrefix("#0 ") && frames[0].contains("discountPercent(for:)"), "\(frames[0])")
        #expect(frames[0].hasSuffix(" at " + (try fixture.reference(fixture.crashSite))), "\(frames[0])")
        // The anchor, a return address: looked up one byte back.
        #expect(frames[1].hasPrefix("#1 ") && frames[1].contains("price(cents:couponCode:)"), "\(frames[1])")
        #expect(frames[1].hasSuffix(" at " + (try fixture.reference(fixture.anchorReturn - 1))), "\(frames[1])")
        // The awaiting callers, tagged, looked up at the resume funclets' entries (no -1).
        #expect(frames[2].hasPrefix("#2 ") && frames[2].contains(" [async] checkout "), "\(frames[2])")
        #expect(frames[2].contains("checkout(cents:couponCode:)"), "\(frames[2])")
        #expect(frames[2].hasSuffix(" at " + (try fixture.reference(fixture.resumePoints[0]))), "\(frames[2])")
        #expect(frames[3].hasPrefix("#3 ") && frames[3].contains(" [async] checkout ") && frames[3].contains("main()"))
        #expect(frames[3].hasSuffix(" at " + (try fixture.reference(fixture.resumePoints[1]))), "\(frames[3])")
        #expect(frames[4].hasPrefix("    … 2 executor frames: swift_job_run, swift_task_switch"), "\(frames[4])")
        // --no-async: the raw physical stack.
        let raw = try CLI.run(["symbolicate", "--no-async", path])
        let rawFrames = raw.stdout.split(separator: "\n").filter { $0.hasPrefix("#") }
        #expect(rawFrames.count == 4, "\(raw.stdout)")
        #expect(!raw.stdout.contains("[async]"))
        #expect(rawFrames.last?.contains("swift_task_switch") == true, "\(raw.stdout)")
    }

    @Test func theJSONCarriesTheKindsAndTheExactLookupAddresses() throws {
        let fixture = try AsyncFixture.shared.get()
        let path = try SymbolicateCommandTests.temporary("async-report-json.json", try fixture.report())
        let result = try CLI.run(["symbolicate", "--json", path])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let thread = try #require((object["threads"] as? [[String: Any]])?.first)
        #expect(thread["async_anchor"] as? Int == 1)
        #expect(thread["async_stop"] as? String == "task_root")
        let physical = try #require(thread["frames"] as? [[String: Any]])
        #expect(physical.map { $0["kind"] as? String } == ["pc", "return_address", "return_address", "return_address"])
        #expect(physical[1]["file_address"] as? String == AsyncFixture.hex(fixture.anchorReturn - 1))
        let async = try #require(thread["async_frames"] as? [[String: Any]])
        #expect(async.map { $0["kind"] as? String } == ["async_resume", "async_resume"])
        #expect(async.map { $0["file_address"] as? String } == fixture.resumePoints.map(AsyncFixture.hex))
    }
}
