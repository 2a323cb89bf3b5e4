/// One frame as numbers in a ``TextTable``: what ``ModuleSymbolicator/records(for:isReturnAddress:into:)``
/// gives batch tools instead of ``SymbolicatedFrame``s.
package struct FrameRecord {
    /// The readable (demangled) function name (-1: unknown).
    package var function: Int32
    /// The function name as stored in the file (-1: unknown).
    package var rawFunction: Int32
    /// The source path (-1: unknown).
    package var file: Int32
    /// The source line (0: unknown).
    package var line: UInt32
    /// The source column (0: unknown).
    package var column: UInt32
    /// True for every frame but the last of an address.
    package var isInlined: Bool
    /// Set when the name came from the symbol table: the offset from the symbol's start.
    package var symbolOffset: UInt64?
}

/// The frames of many addresses (see ``ModuleSymbolicator/records(for:isReturnAddress:)``), kept per distinct
/// address in ascending address order, so a tool can walk them in that order (neighbours share functions and
/// cache lines) and still answer in the order asked.
package struct FrameBatch {
    /// The frames of every distinct address, one group after the other.
    package var records: [FrameRecord]
    /// The distinct addresses in ascending order, with their frames in `records`.
    package var groups: [(address: UInt64, frames: Range<Int>)]
    /// For each address asked, in the order asked: its entry in `groups`.
    package var groupOfAddress: [Int32]

    /// The frames of the `index`th address asked: `records[frames(of: index)]`.
    package func frames(of index: Int) -> Range<Int> { groups[Int(groupOfAddress[index])].frames }
}
