/// What a stored debug file is for, as the debuginfod protocol names it.
public enum DebugFileKind: String, Sendable, CaseIterable {
    /// A file with DWARF debug info (a separate debug file, or an unstripped binary).
    case debuginfo
    /// The binary with code (executable or shared library): unwind info and symbols.
    case executable
    /// A symbol cache of the build (`cohorly debug-files cache`; docs/symbol-cache.md): made by the collector
    /// from an uploaded debug file, or uploaded (`cohorly debug-files upload --include-cache`).
    case symcache
}
