#if canImport(Glibc)
    import Glibc
#endif

/// The machine's processors, as the symbolicators size their threads by them.
enum Processors {
    /// How many processors are online (at least 1, also when the count cannot be read).
    static let online = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}
