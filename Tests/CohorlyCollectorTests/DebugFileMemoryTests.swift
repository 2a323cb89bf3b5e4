import Foundation
import TestWaiting
import Testing

/// Uploads stream: a file 16 MiB larger costs neither the CLI nor a spawned `cohorly serve` 8 MiB more memory.
@Suite struct DebugFileMemoryTests {
    static let extra = 16 << 20

    @Test func uploadMemoryDoesNotGrowWithTheFile() async throws {
        let program = try SplitProgram.get()
        let directory = SplitProgram.scratch("memory")
        // Still the same ELF file with the same build id: bytes past the last section are allowed.
        let small = directory + "/small.debug"
        let big = directory + "/big.debug"
        try FileManager.default.copyItem(atPath: program.debug, toPath: small)
        // Random bytes, so deflate can't shrink them away.
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom")?.readData(ofLength: Self.extra))
        try (Data(contents(program.debug)) + random).write(to: URL(fileURLWithPath: big))

        // `big` has the same build id and other bytes: replacing `small` needs --force.
        let secret = directory + "/secret"
        try Data("memory-secret\n".utf8).write(to: URL(fileURLWithPath: secret))
        let server = try await ServeCommandTests.Server(["--data", directory + "/data", "--auth-token-file", secret])
        defer { server.stopSynchronously() }
        let smallRun = try await spawnMeasuringMemory(
            CLITests.cli.path,
            ["debug-files", "upload", small, "--release", "a", "--host", server.host, "--auth-token-file", secret])
        #expect(smallRun.status == 0)
        let serverAfterSmall = try server.peakMemoryKB()
        // Another release: `big` has other content, so it is sent in full.
        let bigRun = try await spawnMeasuringMemory(
            CLITests.cli.path,
            [
                "debug-files", "upload", big, "--release", "b", "--host", server.host, "--auth-token-file", secret,
                "--force",
            ])
        #expect(bigRun.status == 0)
        let serverAfterBig = try server.peakMemoryKB()
        let limit = 8 << 10  // KiB
        #expect(bigRun.peakKB - smallRun.peakKB < limit, "CLI: \(smallRun.peakKB) KiB, then \(bigRun.peakKB) KiB")
        #expect(
            serverAfterBig - serverAfterSmall < limit, "collector: \(serverAfterSmall) KiB, then \(serverAfterBig) KiB")
        let stored = URL(fileURLWithPath: directory + "/data/debug-files/objects")
        let sizes =
            (FileManager.default.enumerator(at: stored, includingPropertiesForKeys: [.fileSizeKey])?.allObjects
            as? [URL] ?? []).compactMap { try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize }
        #expect(sizes.contains(Self.extra + contents(program.debug).count))
    }
}

/// Runs a program to its end (stdout and stderr discarded); returns its exit status and peak resident memory (KiB).
/// The peak comes from `/usr/bin/time`, which forks the program from its own small process: a child's `ru_maxrss`
/// starts at its parent's peak (the kernel carries the old address space's high-water mark through fork and exec),
/// so measured from here it would be the larger of the program's peak and this test process's, which other tests
/// running alongside keep raising.
func spawnMeasuringMemory(_ path: String, _ arguments: [String]) async throws -> (status: Int32, peakKB: Int) {
    let report = SplitProgram.scratch("peak-memory") + "/time"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    process.arguments = ["-f", "%M", "-o", report, path] + arguments
    process.environment = ["PATH": "/usr/bin:/bin"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try await runToEnd(process)
    // A failed run's report starts with a line about its status; the peak is the last line.
    let text = try String(contentsOfFile: report, encoding: .utf8)
    guard let peak = text.split(separator: "\n").last.flatMap({ Int($0) }) else {
        throw FixtureError(reason: "/usr/bin/time wrote no peak: \(text)")
    }
    return (process.terminationStatus, peak)
}
