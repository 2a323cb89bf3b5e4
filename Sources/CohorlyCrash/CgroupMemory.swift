#if canImport(Glibc)
    import Glibc
#endif

/// The OOM-kill counters of this process's memory cgroup: how a later launch tells that the OOM killer ended a
/// launch.
///
/// cgroup v2: `memory.events` of the process's cgroup (the `0::<path>` line of `/proc/self/cgroup`), key
/// `oom_kill` — it counts the processes of the cgroup (and of its descendants) the OOM killer killed, for a
/// cgroup limit (`memory.max`) and for the whole machine running out alike. cgroup v1 (or a hybrid hierarchy
/// whose memory controller is on v1): `memory.oom_control` of the `memory` hierarchy, key `oom_kill` (Linux ≥
/// 4.13). The cgroup file system is found in `/proc/self/mountinfo`, and the mount's root is taken off the
/// process's cgroup path, so it works inside containers (with a cgroup namespace `/proc/self/cgroup` says `0::/`
/// and the container's own cgroup is mounted at `/sys/fs/cgroup`). The root cgroup has no counter.
enum CgroupMemory {
    /// One counter file and the value it had.
    struct Counter: Equatable, Sendable {
        /// The file, e.g. `/sys/fs/cgroup/memory.events`.
        var file: String
        /// The inode of its cgroup directory: a cgroup removed and made again (a container restarted) is
        /// another cgroup, whose counter says nothing about the old one.
        var directoryInode: UInt64
        /// The `oom_kill` value.
        var kills: UInt64
    }

    /// The counters of this process's memory cgroups as they are now (v2 first; none when neither is found).
    static func counters(
        cgroupFile: String = "/proc/self/cgroup", mountinfoFile: String = "/proc/self/mountinfo"
    ) -> [Counter] {
        guard let cgroups = ProcessFacts.readSmallFile(cgroupFile),
            let mounts = ProcessFacts.readSmallFile(mountinfoFile)
        else { return [] }
        let mountList = parseMountinfo(mounts)
        var found: [Counter] = []
        for (version, path) in memoryCgroupPaths(cgroups) {
            let fileName = version == 2 ? "memory.events" : "memory.oom_control"
            for mount in mountList where mount.matches(version: version) {
                guard let directory = mount.directory(for: path),
                    let counter = read(file: directory + "/" + fileName)
                else { continue }
                found.append(counter)
                break
            }
        }
        return found
    }

    /// The counter in `file` now, or nil when the file is gone or unreadable.
    static func read(file: String) -> Counter? {
        var info = stat()
        let directory = String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)])
        guard stat(directory.isEmpty ? "/" : directory, &info) == 0,
            let text = ProcessFacts.readSmallFile(file), let kills = oomKills(in: text)
        else { return nil }
        return Counter(file: file, directoryInode: UInt64(info.st_ino), kills: kills)
    }

    /// Whether `recorded` rose since: the same cgroup (same directory inode) now counts more OOM kills.
    /// nil when the cgroup is gone or was made again (nothing can be told).
    static func rose(since recorded: Counter) -> Bool? {
        guard let now = read(file: recorded.file), now.directoryInode == recorded.directoryInode,
            now.kills >= recorded.kills
        else { return nil }
        return now.kills > recorded.kills
    }

    /// The value of the `oom_kill` line (`memory.events`, `memory.oom_control`).
    static func oomKills(in text: String) -> UInt64? {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 && parts[0] == "oom_kill" { return UInt64(parts[1]) }
        }
        return nil
    }

    /// (version, cgroup path) of the memory cgroups in `/proc/self/cgroup`: the v2 line `0::<path>` and the
    /// v1 line whose controllers include `memory`.
    static func memoryCgroupPaths(_ text: String) -> [(Int, String)] {
        var paths: [(Int, String)] = []
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0" && parts[1].isEmpty {
                paths.insert((2, String(parts[2])), at: 0)
            } else if parts[1].split(separator: ",").contains("memory") {
                paths.append((1, String(parts[2])))
            }
        }
        return paths
    }

    /// A cgroup file system mount (from `/proc/self/mountinfo`).
    struct Mount: Equatable {
        /// The cgroup path the mount shows at its mount point.
        var root: String
        var mountPoint: String
        /// `cgroup2`, or `cgroup` with its controllers.
        var version: Int
        var controllers: [String]

        func matches(version: Int) -> Bool {
            version == self.version && (version == 2 || controllers.contains("memory"))
        }

        /// Where the cgroup `path` is under this mount, or nil when it is not under the mount's root.
        func directory(for path: String) -> String? {
            var relative = Substring(path)
            if root != "/" {
                guard path == root || path.hasPrefix(root + "/") else { return nil }
                relative = path.dropFirst(root.count)
            }
            let trimmed = relative.drop { $0 == "/" }
            return trimmed.isEmpty ? mountPoint : mountPoint + "/" + trimmed
        }
    }

    /// The cgroup mounts of a mountinfo text.
    static func parseMountinfo(_ text: String) -> [Mount] {
        var mounts: [Mount] = []
        for line in text.split(separator: "\n") {
            let tokens = line.split(separator: " ")
            guard tokens.count > 6, let dash = tokens[6...].firstIndex(of: "-"), tokens.count >= dash + 4 else {
                continue
            }
            let fields = tokens[..<dash]
            let tail = tokens[(dash + 1)...]
            let type = tail[tail.startIndex]
            guard type == "cgroup2" || type == "cgroup" else { continue }
            mounts.append(
                Mount(
                    root: unescape(fields[fields.startIndex + 3]), mountPoint: unescape(fields[fields.startIndex + 4]),
                    version: type == "cgroup2" ? 2 : 1,
                    controllers: tail[tail.startIndex + 2].split(separator: ",").map(String.init)))
        }
        return mounts
    }

    /// Undoes mountinfo's octal escapes (`\040` for a space).
    static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
                let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
