import Cohorly
import Foundation
import Testing

@testable import CohorlyCrash

/// The marker's file format and the cgroup lookup, without processes.
struct LaunchMarkerTests {
    @Test func aContainersCgroupNamespaceResolvesToItsOwnMount() throws {
        // Inside a container with a cgroup namespace: `0::/` and the container's cgroup mounted at /sys/fs/cgroup.
        let mountinfo = """
            1130 1120 0:28 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate
            1131 1120 0:50 / /proc rw - proc proc rw
            """
        let mounts = CgroupMemory.parseMountinfo(mountinfo)
        #expect(
            mounts == [
                CgroupMemory.Mount(
                    root: "/", mountPoint: "/sys/fs/cgroup", version: 2, controllers: ["rw", "nsdelegate"])
            ])
        let paths = CgroupMemory.memoryCgroupPaths("0::/\n")
        #expect(paths.map(\.0) == [2])
        #expect(mounts[0].directory(for: paths[0].1) == "/sys/fs/cgroup")
    }

    @Test func aHybridHierarchyFindsV1MemoryUnderTheMountsRoot() throws {
        // A v1 memory hierarchy bind-mounted from /docker/abc (no cgroup namespace): the mount root comes off.
        let mountinfo = """
            35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
            """
        let mounts = CgroupMemory.parseMountinfo(mountinfo)
        #expect(mounts.count == 2)
        let paths = CgroupMemory.memoryCgroupPaths("4:memory:/docker/abc/app\n0::/\n")
        #expect(paths.map(\.0) == [2, 1])
        let memory = try #require(mounts.first { $0.matches(version: 1) })
        #expect(memory.directory(for: "/docker/abc/app") == "/sys/fs/cgroup/memory/app")
        #expect(memory.directory(for: "/elsewhere") == nil)
        #expect(CgroupMemory.oomKills(in: "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 3)
        #expect(CgroupMemory.oomKills(in: "low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n") == 1)
    }

    @Test func aTornContextSlotFallsBackToThePreviousContext() throws {
        let directory = try makeTemporaryDirectory("marker")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("launch-x.marker").path
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        let record = LaunchRecord(
            insertId: "abc", pid: 42, startTicks: 7, bootId: "boot", executable: "/app", startedMs: 1000,
            oomCounters: [.init(file: "/sys/fs/cgroup/memory.events", directoryInode: 9, kills: 2)])
        func write(_ bytes: [UInt8], at offset: Int) {
            _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        }
        write(LaunchRecord.padded(Array(record.launchJSON.utf8), to: LaunchRecord.launchBytes), at: 0)
        write(
            LaunchRecord.slot(generation: 1, context: Array(#"{"release":"A@1"}"#.utf8)),
            at: LaunchRecord.slotOffsets[1])
        var newer = LaunchRecord.slot(generation: 2, context: Array(#"{"release":"A@2"}"#.utf8))
        write(newer, at: LaunchRecord.slotOffsets[0])
        #expect(LaunchRecord.read(fd: fd)?.context["release"] == "A@2")
        // Killed halfway through rewriting slot 0: its hash no longer matches, the older slot is used.
        newer[newer.count - 3] = UInt8(ascii: "9")
        write(newer, at: LaunchRecord.slotOffsets[0])
        var expected = record
        expected.context = ["release": "A@1"]
        #expect(LaunchRecord.read(fd: fd) == expected)
    }
}
