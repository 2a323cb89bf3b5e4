import Foundation
import Testing

/// Uploads stream: a file 16 MiB larger costs neither the CLI nor a spawned `cohorly serve` 8 MiB more memory.
@Suite struct DebugFileMemoryTests {
    static let extra = 16 << 20

    @Test func uploadMemoryDoesNotGrowWithTheFile() throws {
        let program = try SplitProgram.get()
        let directory = SplitProgram.scratch("memory")
        // Still the same ELF file with the same build id: bytes past the last section are allowed.
        let small = directory + "/small.debug"
        let big = directory + "/big.debug"
        try FileManager.default.copyItem(atPath: program.debug, toPath: small)
        // Random bytes, so deflate can't shrink them away.
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom")?.readData(ofLength: Self.extra))
        try (Data(contents(program.debug)) + random).write(to: URL(fileURLWithPath: big))

        // `big` has the same build id and other bytes: replacing `small` needs the secret and --force.
        let secret = directory + "/secret"
        try Data("memory-secret\n".utf8).write(to: URL(fileURLWithPath: secret))
        let server = try ServeCommandTests.Server(["--data", directory + "/data", "--auth-token-file", secret])
        defer { _ = server.stop() }
        let smallRun = try spawnMeasuringMemory(
            CLITests.cli.path,
            ["debug-files", "upload", small, "--release", "a", "--host", server.host, "--auth-token-file", secret])
        #expect(smallRun.status == 0)
        let serverAfterSmall = try server.peakMemoryKB()
        // Another release: `big` has other content, so it is sent in full.
        let bigRun = try spawnMeasuringMemory(
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

/// Runs a program to its end (stdout and stderr discarded); returns its exit status and peak resident memory
/// (`ru_maxrss`, KiB) from `wait4`.
func spawnMeasuringMemory(_ path: String, _ arguments: [String]) throws -> (status: Int32, peakKB: Int) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let environment: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=/usr/bin:/bin"), nil]
    defer { environment.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, path, &actions, nil, argv, environment)
    guard spawned == 0 else { throw FixtureError(reason: "posix_spawn \(path): \(spawned)") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    let exited = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (exited, usage.ru_maxrss)
}
