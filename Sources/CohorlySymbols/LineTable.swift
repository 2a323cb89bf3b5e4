import CDwarf

/// One compile unit's line rows, copied out of libdw once (libdw keeps them sorted by address, sequence ends
/// first at equal addresses) so each lookup is a binary search over plain values: no libdw lock, no strings
/// built per address.
final class LineTable {
    struct Row {
        var address: UInt64
        var line: UInt32
        var column: UInt32
        /// The file's number as the caller's `fileNumber` gave it (-1 when the row names no file).
        var file: Int32
        var isSequenceEnd: Bool
    }

    /// Read on every lookup: no dynamic exclusivity check (set once in `init`, then only read).
    @exclusivity(unchecked) private(set) var rows: [Row] = []

    /// Reads the unit's rows; `fileNumber` turns each distinct file name into the number rows carry.
    init(unitDie: Dwarf_Die, fileNumber: (String) -> Int32) {
        var die = unitDie
        var lines: OpaquePointer?
        var count = 0
        guard dwarf_getsrclines(&die, &lines, &count) == 0, let lines else { return }
        var fileIndex: [UnsafePointer<CChar>: Int32] = [:]
        rows.reserveCapacity(count)
        for index in 0..<count {
            guard let line = dwarf_onesrcline(lines, index) else { continue }
            var address: Dwarf_Addr = 0
            var number: Int32 = 0
            var column: Int32 = 0
            var isEnd = false
            guard dwarf_lineaddr(line, &address) == 0 else { continue }
            _ = dwarf_lineno(line, &number)
            _ = dwarf_linecol(line, &column)
            _ = dwarf_lineendsequence(line, &isEnd)
            var file: Int32 = -1
            if let source = dwarf_linesrc(line, nil, nil) {
                if let known = fileIndex[source] {
                    file = known
                } else {
                    file = fileNumber(String(cString: source))
                    fileIndex[source] = file
                }
            }
            rows.append(
                Row(
                    address: address, line: UInt32(truncatingIfNeeded: number),
                    column: UInt32(truncatingIfNeeded: column), file: file, isSequenceEnd: isEnd))
        }
    }

    /// The row covering `address` (the last row at or before it), or nil when that row ends a sequence or
    /// there is none — the same answer as libdw's `dwarf_getsrc_die`.
    func row(at address: UInt64) -> Row? {
        let low = partitionPoint(0..<rows.count) { rows[$0].address <= address }
        guard low > 0 else { return nil }
        let row = rows[low - 1]
        return row.isSequenceEnd ? nil : row
    }
}
