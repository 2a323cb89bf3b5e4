import Cohorly
import CohorlyCollector
import Foundation
import TestWaiting
import Testing

@testable import CohorlyCrash

/// A tmpfs of a few KiB mounted for one test (needs root or CAP_SYS_ADMIN: CI runs as root).
struct TinyFileSystem {
    let path: URL

    /// Mounts a tmpfs of `kib` KiB at a fresh directory; nil, with the reason printed, where mounting is
    /// impossible (the test then checks nothing).
    init?(kib: Int, label: String) {
        guard let directory = try? makeTemporaryDirectory(label) else { return nil }
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=\(kib)k,mode=0700", "tmpfs", directory.path]
        let errors = Pipe()
        mount.standardError = errors
        do {
            try mount.run()
            mount.waitUntilExit()
        } catch {
            print("full-disk test skipped: cannot run mount: \(error)")
            return nil
        }
        guard mount.terminationStatus == 0 else {
            let reason = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            print("full-disk test skipped: cannot mount a tmpfs (uid \(getuid())): \(reason)")
            try? FileManager.default.removeItem(at: directory)
            return nil
        }
        path = directory
    }

    /// Bytes still free.
    var freeBytes: Int {
        var info = statvfs()
        guard statvfs(path.path, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_bsize)
    }

    /// Writes a filler file until at most `leaving` bytes stay free (0: full).
    func fill(leaving: Int = 0, name: String = "filler") {
        let fd = open(path.appendingPathComponent(name).path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let page = [UInt8](repeating: 0x55, count: 4096)
        while freeBytes > leaving, write(fd, page, min(page.count, freeBytes - leaving)) > 0 {}
    }

    func unmount() {
        let umount = Process()
        umount.executableURL = URL(fileURLWithPath: "/bin/umount")
        umount.arguments = ["-l", path.path]
        try? umount.run()
        umount.waitUntilExit()
        try? FileManager.default.removeItem(at: path)
    }
}

/// A full disk must not lose the crash: the report's space is reserved at install, before the launch marker;
/// a report that cannot be whole keeps at least its header and crashed thread; a report is deleted only once its
/// event is durably queued (not while the queue lives in memory). Real CrashDemo processes.
@Suite("Full disks")
struct FullDiskTests {
    @Test func aDiskFilledAfterInstallStillGetsTheWholeReport() async throws {
        guard let disk = TinyFileSystem(kib: 2048, label: "full-after") else { return }
        defer { disk.unmount() }
        let root = try makeTemporaryDirectory("full-after-root")
        defer { removeLaunchDirectory(root) }
        let go = root.appendingPathComponent("go")
        async let crash = runCrashDemo(
            ["crash", "null-write", "--threads", "2", "--until", go.path], reportDirectory: disk.path)
        // Installed (the recorder reserved its space first), then the disk fills up, then the app crashes.
        try await waitUntil("the recorder is installed") {
            ((try? FileManager.default.contentsOfDirectory(atPath: disk.path.path)) ?? []).contains {
                $0.hasPrefix("reserve-")
            }
        }
        disk.fill()
        #expect(disk.freeBytes == 0)
        #expect(FileManager.default.createFile(atPath: go.path, contents: nil))
        let run = try await crash
        #expect(run.signal == SIGSEGV)
        #expect(run.tornFiles.isEmpty)
        let report = try #require(try run.reports().first)
        #expect(report.complete)
        #expect(report.signal.name == "SIGSEGV")
        #expect((report.crashedThread?.frames.count ?? 0) > 3)
        #expect(report.threads.count >= 2)
        #expect(!report.modules.isEmpty)
    }

    @Test func aNearlyFullDiskStillGetsTheHeaderAndTheCrashedThread() async throws {
        guard let disk = TinyFileSystem(kib: 256, label: "nearly-full") else { return }
        defer { disk.unmount() }
        let root = try makeTemporaryDirectory("nearly-full-root")
        defer { removeLaunchDirectory(root) }
        disk.fill(leaving: 16 * 1024)
        // With the client: the launch marker (16 KiB) would take the space if it were made first.
        let run = try await runCrashDemo(
            ["crash", "null-write", "--storage", root.appendingPathComponent("storage").path],
            reportDirectory: disk.path, withClient: true, environment: ["COHORLY_HOST": "http://127.0.0.1:9"])
        #expect(run.signal == SIGSEGV)
        let report = try #require(try run.reports().first, "\(run.tornFiles)")
        #expect(report.signal.name == "SIGSEGV")
        #expect((report.crashedThread?.frames.count ?? 0) > 0)
    }

    @Test func aReportIsKeptWhileTheQueueIsInMemory() async throws {
        let setup = try DeliveryTests.Setup()
        defer { setup.finish() }
        let crash = try await setup.launch(["crash", "null-write"])
        #expect(crash.signal == SIGSEGV)
        #expect(crash.reportFiles.count == 1)
        // The queue's directory cannot be made (as on a full disk): the client keeps its queue in memory.
        let blocker = setup.root.appendingPathComponent("not-a-directory")
        #expect(FileManager.default.createFile(atPath: blocker.path, contents: Data("x".utf8)))
        let inMemory = try await runCrashDemo(
            ["run", "--storage", blocker.appendingPathComponent("storage").path], reportDirectory: setup.reports,
            withClient: true, environment: setup.environment)
        #expect(inMemory.stderr.contains("using memory"), "\(inMemory.stderr)")
        #expect(inMemory.stdout.contains("kept: 1"), "\(inMemory.stdout)")
        // The process has ended and its queue with it: the report is still there for the next launch.
        #expect(inMemory.reportFiles.count == 1)

        let next = try await setup.launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        #expect(next.reportFiles.isEmpty)  // durably queued now, then deleted
        #expect(try await delivered { try setup.exceptions() }.count == 1)  // the resend is deduplicated by its $insert_id
    }

    /// The queue and the reports on one nearly full file system (as by default): with nothing free the crash
    /// leaves an empty `.tmp` (with a few KiB, the reserve taken before the queue holds a report:
    /// ReserveBeforeQueueTests), and the next launch (once space was freed) still sends an event for the crash,
    /// from the time, pid and launch the file's name holds — never a silent delete.
    @Test(arguments: [0, 16, 64])
    func aCrashWhoseReportFoundNoSpaceStillArrives(freeKiB: Int) async throws {
        guard let disk = TinyFileSystem(kib: 1024, label: "lost-\(freeKiB)") else { return }
        defer { disk.unmount() }
        let launches = try SharedDiskLaunches(disk: disk, freeKiB: freeKiB)
        defer { launches.collector.stop() }
        let collector = launches.collector
        let reports = launches.reports
        func launch(_ arguments: [String]) async throws -> CrashDemoRun { try await launches.launch(arguments) }
        let crash = try await launch(["crash", "null-write"])
        #expect(crash.signal == SIGSEGV)
        // The crashed launch's report, whole, cut short or empty: its name says which launch it was.
        let left = try #require((crash.reportFiles.map(\.lastPathComponent) + crash.tornFiles).first)
        let insertId = String(left.split(separator: "-", maxSplits: 2)[2].split(separator: ".")[0])
        let size = try FileManager.default.attributesOfItem(atPath: reports.appendingPathComponent(left).path)[.size]
        let lost = left.hasSuffix(".tmp") && (size as? Int) == 0
        if freeKiB == 0 { #expect(lost) }
        // Space is freed; the next launch sends the crash.
        #expect(unlink(disk.path.appendingPathComponent("filler").path) == 0)
        let next = try await launch(["run"])
        #expect(next.exitStatus == 0, "\(next.stdout) \(next.stderr)")
        let query = EventQuery(event: "$exception", limit: 10)
        #expect(await eventually { (try? collector.store.events(matching: query).count) == 1 }, "left: \(left)")
        let event = try #require(try collector.store.events(matching: query).first)
        #expect(event.insertId == insertId)
        if lost {
            let properties = try #require(CohorlyValue(json: event.propertiesJSON)?.objectValue)
            #expect(properties["$exception_abnormal_exit_cause"] == "crash_report_lost")
            #expect(properties["$exception_pid"] != nil)
            #expect(event.time == Int64(left.prefix(16)))
        }
        #expect(next.tornFiles.isEmpty && next.reportFiles.isEmpty)
        print("full disk, \(freeKiB) KiB free: \(lost ? "report lost" : "report kept"), event delivered")
    }
}

/// A collector and CrashDemo launches whose queue and reports share one nearly full tiny file system, as they do
/// by default: the set-up of the lost-report test above and of ReserveBeforeQueueTests.
struct SharedDiskLaunches {
    let collector: Collector
    /// The report directory (`crashes/` on the disk); the queue is `queue/` beside it.
    let reports: URL
    let storage: URL

    /// Starts the collector, makes the report directory and fills `disk` until `freeKiB` KiB are left.
    init(disk: TinyFileSystem, freeKiB: Int) throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["demo-token"]
        collector = try Collector(configuration: configuration)
        _ = try collector.start()
        reports = disk.path.appendingPathComponent("crashes")
        storage = disk.path.appendingPathComponent("queue")
        do {
            try FileManager.default.createDirectory(at: reports, withIntermediateDirectories: false)
        } catch {
            collector.stop()
            throw error
        }
        disk.fill(leaving: freeKiB * 1024)
    }

    /// One CrashDemo launch with the client, its queue and reports on the disk, sending to the collector.
    func launch(_ arguments: [String]) async throws -> CrashDemoRun {
        try await runCrashDemo(
            arguments + ["--storage", storage.path, "--sender-timeout-ms", "15000"], reportDirectory: reports,
            withClient: true,
            environment: ["COHORLY_HOST": collector.baseURL.absoluteString, "COHORLY_TOKEN": "demo-token"])
    }
}
