import Cohorly
import CohorlyCollector
import CohorlyCrash
import Foundation
import TestWaiting
import Testing

/// An app whose home is read-only (systemd `ProtectHome=read-only`, Kubernetes `readOnlyRootFilesystem`) starts,
/// crashes, and its crash is reported: the default state directory falls back (StateDirectory+Fallback.swift).
/// Real CrashDemo launches with no directory options, a loopback collector. The tests run as root, for whom a
/// mode 0555 directory is writable all the same: HOME is a tmpfs mounted read-only over it, in a mount namespace
/// of the launch's own (`unshare -m`), gone with the launch and its detached sender.
@Suite struct ReadOnlyHomeTests {
    /// Whether this machine can give a launch a read-only HOME: as root, a private mount namespace with a
    /// read-only tmpfs (else a chmod 0555 directory, which binds every other user).
    static let readOnlyHomeIsPossible: Bool = {
        guard geteuid() == 0 else { return true }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-m", "/bin/sh", "-c", "mount -t tmpfs -o ro,size=64k tmpfs /mnt && ! touch /mnt/x"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// Runs CrashDemo (`arguments`, no directory options) with HOME `home` read-only, the temporary directory
    /// `temporary`, and no XDG variables or COHORLY_* settings but the collector's.
    static func launch(
        _ arguments: [String], home: URL, temporary: URL, collector: Collector, stderr: URL
    ) async throws -> Process {
        let process = Process()
        let demo = DemoBuild.debug.executable.path
        if geteuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
            process.arguments =
                ["-m", "/bin/sh", "-c", "mount -t tmpfs -o ro,size=64k tmpfs \"$HOME\" && exec \"$0\" \"$@\"", demo]
                + arguments
        } else {
            chmod(home.path, 0o555)
            process.executableURL = URL(fileURLWithPath: demo)
            process.arguments = arguments
        }
        var environment = ProcessInfo.processInfo.environment.filter {
            !$0.key.hasPrefix("COHORLY_") && !$0.key.hasPrefix("XDG_")
        }
        environment["HOME"] = home.path
        environment["TMPDIR"] = temporary.path
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment["COHORLY_HOST"] = collector.baseURL.absoluteString
        environment["COHORLY_TOKEN"] = "demo-token"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: stderr)
        try process.run()
        return process
    }

    @Test(.enabled(if: readOnlyHomeIsPossible, "cannot mount a read-only tmpfs in a mount namespace (unshare -m)"))
    func anAppWithAReadOnlyHomeStartsCrashesAndItsCrashIsReported() async throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["demo-token"]
        let collector = try Collector(configuration: configuration)
        _ = try collector.start()
        let root = try makeTemporaryDirectory("read-only-home")
        defer {
            removeLaunchDirectory(root)
            collector.stop()
        }
        let home = root.appendingPathComponent("home")
        let temporary = root.appendingPathComponent("tmp")
        for directory in [home, temporary] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        }
        let fallback = temporary.appendingPathComponent("cohorly-\(geteuid())")

        // The first launch starts (install does not throw: CrashDemo exits 1 when it does) and crashes.
        let firstErrors = root.appendingPathComponent("first.stderr")
        _ = FileManager.default.createFile(atPath: firstErrors.path, contents: nil)
        let first = try await Self.launch(
            ["crash", "null-write", "--sender-timeout-ms", "15000"], home: home, temporary: temporary,
            collector: collector, stderr: firstErrors)
        await waitForExit(first)
        #expect(first.terminationReason == .uncaughtSignal && first.terminationStatus == SIGSEGV)
        // It said once where the reports go instead, and how to choose another directory.
        let said = try String(contentsOf: firstErrors, encoding: .utf8)
        #expect(said.components(separatedBy: "the state directory cannot be used").count == 2, "\(said)")
        #expect(said.contains("Read-only file system") && said.contains(fallback.path), "\(said)")
        #expect(said.contains("XDG_STATE_HOME") && said.contains("Options(reportDirectory:)"), "\(said)")
        #expect(!said.contains("queue not persisted"), "\(said)")
        #expect(FileManager.default.fileExists(atPath: fallback.appendingPathComponent("queues/CrashDemo").path))

        // The crash-time sender, started by the crash with the fallback queue and report directory, sends it: no
        // later launch is needed.
        try await waitUntil("the crash reached the collector", seconds: 60) {
            ((try? collector.store.events(matching: EventQuery(event: "$exception", limit: 10))) ?? []).count == 1
        }
    }
}
