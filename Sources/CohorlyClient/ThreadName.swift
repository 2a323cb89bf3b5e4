#if canImport(Glibc)
    import Glibc
#endif

/// The kernel's name of the calling thread (`/proc/<pid>/task/<tid>/comm`), the one crash reports, `top -H` and
/// debuggers show. Foundation's `Thread.name` does not reach it on Linux: the SDK's threads showed up in crash
/// reports under the app's name, as if they were the app's.
package enum ThreadName {
    /// Names the calling thread `name`, cut to the kernel's 15 bytes. Written to `/proc/thread-self/comm` (what
    /// `pthread_setname_np` does for another thread; Swift's Glibc module does not export that function).
    package static func setCurrent(_ name: String) {
        let bytes = Array(name.utf8.prefix(15))
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
