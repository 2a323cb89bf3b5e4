#if canImport(Glibc)
    import Glibc
#endif

/// Checks of the directories a command is told to search (`--debug-dir`, `--path`): one that does not exist is
/// a usage error, not a search that silently finds nothing.
package enum DirectoryArguments {
    /// The first of `paths` that does not exist (nil when all do). A file is accepted too: it is searched as
    /// itself.
    package static func firstMissing(_ paths: [String]) -> String? {
        paths.first { path in
            var status = stat()
            return stat(path, &status) != 0
        }
    }
}
