import Cohorly
import CohorlyCollector
@testable import CohorlyCollectorCore
import Foundation
import Synchronization
import Testing

@testable import CohorlyCrash

/// Captures a handled error, then runs one more statement on the next line. Everything the call takes is borrowed
/// from the caller (nothing to release after it), so the captured return address points into that next line and
/// a reader that takes the innermost frame for an exact PC names the wrong line.
@inline(never)
func captureThenCount(_ cohorly: Cohorly, _ error: any Error, _ properties: Properties) {
    cohorly.captureError(error, properties: properties)
    countCapture()
}

/// Captures made by ``captureThenCount(_:_:_:)``.
let capturesCounted = Atomic<Int>(0)

@inline(never)
func countCapture() { capturesCounted.add(1, ordering: .relaxed) }

/// A handled error from this (real) process, sent to the real collector, read back off the device: the innermost
/// frame carries its kind (`return_address`) on the wire, so `crashes show` and `cohorly symbolicate EVENT.json`
/// look it up one byte back, on the line of the call, as the device and llvm-symbolizer do (issue 22: it was
/// looked up as an exact PC, one line late, overriding the device's right line).
@Suite struct OffDeviceLineTests {
    /// `file:line` llvm-symbolizer gives for `offset` in `path` (the physical function's, not the inlined ones').
    static func referenceLine(_ path: String, offset: UInt64) throws -> (file: String, line: Int) {
        let process = Process()
        process.executableURL = ReferenceSymbolizer.executable
        process.arguments = ["--obj=\(path)", "--no-inlines", "0x" + String(offset, radix: 16)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        let location = lines.count > 1 ? lines[1].split(separator: ":") : []
        guard location.count >= 2, let line = Int(location[1]) else { return ("", 0) }
        return (String(location[0]), line)
    }

    @Test func theCatchingLineIsTheSameOnTheDeviceInCrashesShowAndInLLVMSymbolizer() async throws {
        let setup = try CaptureErrorTests.Setup()
        defer { setup.finish() }
        let counted = capturesCounted.load(ordering: .relaxed)
        captureThenCount(setup.client, OrderParseError(line: 5), ["order": "A-5"])
        #expect(await setup.client.flush())
        let event = try #require(try setup.exceptions().first)
        let site = try #require(CaptureErrorTests.siteFrames(event).first)
        #expect(site[CapturedException.frameKindKey] == "return_address")
        #expect(site["function"]?.stringValue?.contains("captureThenCount") == true, "\(site)")
        let deviceLine = try #require(site["lineno"]?.intValue)
        // The oracle: the return address − 1, and (to show the test can tell) the return address itself.
        let address = try #require(site["instruction_addr"]?.stringValue.flatMap(Address.init(hex:)))
        let base = try #require(site["image_addr"]?.stringValue.flatMap(Address.init(hex:)))
        let executable = LiveStack.executablePath
        let reference = try Self.referenceLine(executable, offset: address.value - base.value - 1)
        let atReturnAddress = try Self.referenceLine(executable, offset: address.value - base.value)
        #expect(reference.file.hasSuffix("OffDeviceLineTests.swift"))
        #expect(deviceLine == reference.line)
        try #require(atReturnAddress.line != reference.line, "the return address is on the call's line here")
        // Off the device: the collector, with the executable in a directory it searches.
        let directory = try makeTemporaryDirectory("off-device")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(
            atPath: executable, toPath: directory.appendingPathComponent("binary").path)
        let queries = CrashQueries(
            store: setup.collector.store, debugFiles: setup.collector.debugFiles, extraDirectories: [directory.path])
        let insertId = try #require(event["$insert_id"]?.stringValue)
        let shown = try #require(try queries.show(insertId: insertId))
        let top = try #require(shown["crash"]?["threads"]?.arrayValue?.first?["frames"]?.arrayValue?.first)
        #expect(top["kind"] == "return_address")
        let symbol = try #require(top["symbols"]?.arrayValue?.last)
        #expect(symbol["function"]?.stringValue?.contains("captureThenCount") == true, "\(top)")
        #expect(symbol["line"]?.intValue == reference.line, "\(top)")
        #expect(capturesCounted.load(ordering: .relaxed) > counted)
    }
}
