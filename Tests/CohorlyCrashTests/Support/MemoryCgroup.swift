import Foundation

/// A memory cgroup with a small limit under this process's own, for one child process: cgroup v2 when this
/// process's cgroup delegates the memory controller, else the cgroup v1 memory hierarchy (this machine's is v1:
/// a hybrid layout). Making one needs write access to the cgroup file system (root, or a delegated subtree).
struct MemoryCgroup {
    /// Why no cgroup could be made (the test says so and skips).
    struct Unavailable: Error, CustomStringConvertible {
        var reasons: [String]
        var description: String { "no memory cgroup could be made: " + reasons.joined(separator: "; ") }
    }

    let directory: String
    /// 2 or 1.
    let version: Int
    /// Writing a pid here moves that process into the cgroup.
    var procsFile: String { directory + "/cgroup.procs" }

    static func make(limitBytes: Int) -> Result<MemoryCgroup, Unavailable> {
        var reasons: [String] = []
        let name = "cohorly-oom-\(getpid())-\(UUID().uuidString.prefix(8))"
        let cgroups = (try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)) ?? ""
        let mounts = CgroupMounts()
        // cgroup v2: the child of our cgroup needs `memory` in our cgroup's subtree_control.
        if let path = line(cgroups, where: { $0[0] == "0" && $0[1].isEmpty }), let mount = mounts.v2 {
            let parent = mount + path
            let directory = parent + "/" + name
            if mkdir(directory, 0o755) != 0 {
                reasons.append("v2: mkdir \(directory): \(String(cString: strerror(errno)))")
            } else {
                _ = write("+memory", to: parent + "/cgroup.subtree_control")
                if !exists(directory + "/memory.max") {
                    reasons.append("v2: the memory controller is not delegated to \(parent.isEmpty ? "/" : parent)")
                    rmdir(directory)
                } else if write(String(limitBytes), to: directory + "/memory.max") {
                    _ = write("0", to: directory + "/memory.swap.max")
                    return .success(MemoryCgroup(directory: directory, version: 2))
                } else {
                    reasons.append("v2: cannot set memory.max in \(directory)")
                    rmdir(directory)
                }
            }
        } else {
            reasons.append("v2: no cgroup2 mount or no 0:: line in /proc/self/cgroup")
        }
        // cgroup v1: the memory hierarchy.
        if let path = line(cgroups, where: { $0[1].split(separator: ",").contains("memory") }),
            let mount = mounts.v1Memory
        {
            let directory = mount + path + "/" + name
            if mkdir(directory, 0o755) != 0 {
                reasons.append("v1: mkdir \(directory): \(String(cString: strerror(errno)))")
            } else if write(String(limitBytes), to: directory + "/memory.limit_in_bytes") {
                _ = write(String(limitBytes), to: directory + "/memory.memsw.limit_in_bytes")
                return .success(MemoryCgroup(directory: directory, version: 1))
            } else {
                reasons.append("v1: cannot set memory.limit_in_bytes in \(directory)")
                rmdir(directory)
            }
        } else {
            reasons.append("v1: no memory hierarchy mounted")
        }
        return .failure(Unavailable(reasons: reasons))
    }

    /// Shell commands that, run in a new cgroup and mount namespace (`unshare --cgroup --mount`), mount a fresh
    /// cgroup file system as a container runtime does: the namespace's root — this cgroup — at the usual place.
    var containerMounts: String {
        version == 2
            ? "mount -t cgroup2 none /sys/fs/cgroup"
            : "mount -t tmpfs none /sys/fs/cgroup && mkdir /sys/fs/cgroup/memory"
                + " && mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory"
    }

    /// A command prefix that runs a program in this cgroup from its start; with `container`, also in a cgroup
    /// and mount namespace of its own with ``containerMounts`` done (so `/proc/self/cgroup` says `/`).
    func prefix(container: Bool) -> [String] {
        guard container else { return ["/bin/sh", "-c", #"echo $$ > "$0" && exec "$@""#, procsFile] }
        let script = #"""
            echo $$ > "$0" || exit 90
            mounts=$1
            shift
            exec unshare --cgroup --mount /bin/sh -c "$mounts"' && exec "$@"' sh "$@"
            """#
        return ["/bin/sh", "-c", script, procsFile, containerMounts]
    }

    /// Why a container-like namespace cannot be made here (nil when it can).
    func containerUnavailable() -> String? {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/bin/sh")
        probe.arguments = ["-c", #"unshare --cgroup --mount /bin/sh -c "$0" 2>&1"#, containerMounts]
        let output = Pipe()
        probe.standardOutput = output
        probe.standardError = output
        do { try probe.run() } catch { return "cannot run unshare: \(error)" }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? nil : "unshare --cgroup --mount failed: \(text)"
    }

    /// Removes the cgroup (its processes have ended).
    func remove() { rmdir(directory) }

    private static func line(_ text: String, where match: ([Substring]) -> Bool) -> String? {
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, match(parts) { return parts[2] == "/" ? "" : String(parts[2]) }
        }
        return nil
    }

    private static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    private static func write(_ text: String, to path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return text.withCString { Glibc.write(fd, $0, strlen($0)) } == text.utf8.count
    }

    /// Where the cgroup file systems are mounted (mount roots of `/` only: this process's own view).
    private struct CgroupMounts {
        var v2: String?
        var v1Memory: String?

        init() {
            let text = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                let tokens = line.split(separator: " ")
                guard let dash = tokens.firstIndex(of: "-"), dash >= 5, tokens.count > dash + 3, tokens[3] == "/"
                else { continue }
                let type = tokens[dash + 1]
                if type == "cgroup2" && v2 == nil { v2 = String(tokens[4]) }
                if type == "cgroup" && tokens[dash + 3].split(separator: ",").contains("memory") {
                    v1Memory = String(tokens[4])
                }
            }
        }
    }
}
