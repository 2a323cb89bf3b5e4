import Cohorly

#if canImport(Glibc)
    import Glibc
#endif

/// Facts about a process that tell one launch from another: what a launch marker records, and what a later
/// launch compares it with. Read from /proc, Foundation-free (install stays cheap).
enum ProcessFacts {
    /// The kernel's id of this boot (`/proc/sys/kernel/random/boot_id`), or "" when unreadable. A marker from
    /// another boot belongs to a process that cannot still run.
    static func bootId() -> String {
        (readSmallFile("/proc/sys/kernel/random/boot_id") ?? "").filter { !$0.isWhitespace }
    }

    /// When `pid` started, in clock ticks after boot (field 22 of `/proc/<pid>/stat`), or nil when no such
    /// process is visible. With the boot id it names one process: a pid reused later starts later.
    static func startTicks(of pid: Int32) -> UInt64? {
        guard let stat = readSmallFile("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may hold spaces and parentheses): starttime is the 20th.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }

    /// The path of this process's executable (`/proc/self/exe`), or "".
    static func executable() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return "" }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// This process's resident memory in bytes (`/proc/self/statm`, second field × page size), or nil.
    /// One open/read/close of a tiny file: cheap enough to sample on a timer.
    static func residentBytes() -> UInt64? {
        var buffer = [UInt8](repeating: 0, count: 128)
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = buffer.prefix(count).split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = UInt64(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages.multipliedReportingOverflow(by: UInt64(max(sysconf(Int32(_SC_PAGESIZE)), 0))).partialValue
    }

    /// Unix time in milliseconds.
    static func nowMilliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(now.tv_sec, 0)) * 1000 + UInt64(max(now.tv_nsec, 0)) / 1_000_000
    }

    /// A small file of /proc or /sys as text (at most 64 KiB), or nil (the client's reader: plain system calls).
    static func readSmallFile(_ path: String) -> String? { AutomaticProperties.readSmallFile(path) }
}
