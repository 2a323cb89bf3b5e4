#if canImport(Glibc)
    import Glibc
#endif

/// Exit statuses of every `cohorly` command (listed in `cohorly --help` and the README).
package enum ExitStatus: Int32 {
    /// Everything worked.
    case success = 0
    /// Some input failed (a file that could not be read, an address or id not found, …).
    case failure = 1
    /// The command line was wrong.
    case usage = 2
}
