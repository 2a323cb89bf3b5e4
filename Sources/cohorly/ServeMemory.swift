#if canImport(Glibc)
    import Glibc
#endif

/// Malloc settings for `cohorly serve`, a process of its own.
enum ServeMemory {
    /// Buffers of 256 KiB and more (request bodies, inflated bodies, parse trees' arrays) are mapped and unmapped,
    /// never kept in malloc's arenas once freed. With a thread per connection, glibc's adaptive threshold (it rises
    /// to the largest buffer freed, up to 32 MiB) let each of its arenas keep the largest bodies it had seen, so
    /// resident memory grew far past what the requests held at once. `mallopt(M_MMAP_THRESHOLD, …)`, looked up at
    /// run time (malloc.h is not in the C library's Swift module).
    static func mapLargeBuffers() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
        guard let symbol = dlsym(nil, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mmapThreshold, 256 << 10)
    }
}
