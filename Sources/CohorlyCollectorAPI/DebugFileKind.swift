/// What a stored debug file is for, as the debuginfod protocol names it.
public enum DebugFileKind: String, Sendable, CaseIterable {
    /// A file with DWARF debug info (a separate debug file, or an unstripped binary).
    case debuginfo
    /// The binary with code (executable or shared library): unwind info and symbols.
    case executable
}
