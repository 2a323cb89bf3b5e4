import CDwarf

/// One compile unit's line rows, copied out of libdw once (libdw keeps them sorted by address, sequence ends
/// first at equal addresses) so each lookup is a binary search over plain values: no libdw lock, no strings
/// built per address.
///
/// Kept as columns, 16 bytes a row (24 as an array of `Row`s): the addresses as 32-bit offsets from the lowest
/// when the unit's code spans less than 4 GiB (as every real unit does; else as full addresses), and the place
/// (line, column, file; a sequence end as file `Int32.min`) beside them.
final class LineTable {
    struct Row: Equatable {
        var address: UInt64
        var line: UInt32
        var column: UInt32
        /// The file's number as the caller's `fileNumber` gave it (-1 when the row names no file).
        var file: Int32
        var isSequenceEnd: Bool
    }

    private struct Place {
        var line: UInt32
        var column: UInt32
        /// As `Row.file`; `Int32.min` for a row that ends a sequence.
        var file: Int32
    }

    /// The lowest row address; `offsets` are counted from it.
    private var base: UInt64 = 0
    // Read on every lookup: no dynamic exclusivity check (set once in `init`, then only read). Exactly one of
    // `offsets` and `addresses` holds the rows' addresses.
    @exclusivity(unchecked) private var offsets: [UInt32] = []
    @exclusivity(unchecked) private var addresses: [UInt64] = []
    @exclusivity(unchecked) private var places: [Place] = []

    /// Where the last lookup ended: lookups in ascending order search on from there.
    @exclusivity(unchecked) private var cursor = 0

    /// How many rows the unit has.
    var count: Int { places.count }

    /// Reads the unit's rows; `fileNumber` turns each distinct file name into the number rows carry.
    init(unitDie: Dwarf_Die, fileNumber: (String) -> Int32) {
        var die = unitDie
        var lines: OpaquePointer?
        var count = 0
        guard dwarf_getsrclines(&die, &lines, &count) == 0, let lines else { return }
        var lowest = UInt64.max
        var highest: UInt64 = 0
        for index in 0..<count {
            var address: Dwarf_Addr = 0
            guard let line = dwarf_onesrcline(lines, index), dwarf_lineaddr(line, &address) == 0 else { continue }
            lowest = min(lowest, address)
            highest = max(highest, address)
        }
        guard lowest <= highest else { return }
        base = lowest
        let narrow = highest - lowest <= UInt64(UInt32.max)
        if narrow { offsets.reserveCapacity(count) } else { addresses.reserveCapacity(count) }
        places.reserveCapacity(count)
        var fileIndex: [UnsafePointer<CChar>: Int32] = [:]
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
            if narrow {
                offsets.append(UInt32(truncatingIfNeeded: address &- lowest))  // ≤ UInt32.max: checked above
            } else {
                addresses.append(address)
            }
            places.append(
                Place(
                    line: UInt32(truncatingIfNeeded: number), column: UInt32(truncatingIfNeeded: column),
                    file: isEnd ? Int32.min : file))
        }
    }

    /// The rows of a line program decoded by this package (see ``LineProgram``); `fileNumbers` are the numbers
    /// of its files (a row naming a file past them names none).
    init(program: LineProgram, fileNumbers: [Int32]) {
        let rows = program.rows
        guard let first = rows.first, let last = rows.last else { return }
        base = first.address  // sorted by address
        let narrow = last.address - first.address <= UInt64(UInt32.max)
        if narrow { offsets.reserveCapacity(rows.count) } else { addresses.reserveCapacity(rows.count) }
        places.reserveCapacity(rows.count)
        for row in rows {
            if narrow {
                offsets.append(UInt32(truncatingIfNeeded: row.address &- first.address))  // ≤ UInt32.max: checked
            } else {
                addresses.append(row.address)
            }
            let file = row.file < UInt32(fileNumbers.count) ? fileNumbers[Int(row.file)] : -1
            places.append(Place(line: row.line, column: row.column, file: row.isSequenceEnd ? Int32.min : file))
        }
    }

    /// Appends, in order, the address of every row whose place (line, column, file, or the end of a sequence)
    /// is not the place of the row before it: where ``row(at:)``'s answer may change (the symbol cache's writer).
    /// Where all the rows at an address have the places of the rows before them, the row covering the address
    /// before it has the place of the last of them, which answers from there on: nothing changes at it. In Swift
    /// code about half the rows repeat the place before them (a statement's flags change, not its place).
    func appendPlaceChanges(to bounds: inout [UInt64]) {
        for index in places.indices {
            if index > 0 {
                let place = places[index]
                let before = places[index - 1]
                if place.line == before.line && place.column == before.column && place.file == before.file { continue }
            }
            bounds.append(addresses.isEmpty ? base + UInt64(offsets[index]) : addresses[index])
        }
    }

    /// Every row in order, a sequence end with file -1 (for tests).
    var rows: [Row] {
        places.indices.map { index in
            let place = places[index]
            return Row(
                address: addresses.isEmpty ? base + UInt64(offsets[index]) : addresses[index], line: place.line,
                column: place.column, file: place.file == Int32.min ? -1 : place.file,
                isSequenceEnd: place.file == Int32.min)
        }
    }

    /// The row covering `address` (the last row at or before it), or nil when that row ends a sequence or
    /// there is none — the same answer as libdw's `dwarf_getsrc_die`.
    func row(at address: UInt64) -> Row? {
        let low: Int
        if addresses.isEmpty {
            guard address >= base else { return nil }
            let distance = address - base
            let offset = distance > UInt64(UInt32.max) ? UInt32.max : UInt32(truncatingIfNeeded: distance)
            low = partitionPoint(0..<offsets.count, from: cursor) { offsets[$0] <= offset }
        } else {
            low = partitionPoint(0..<addresses.count, from: cursor) { addresses[$0] <= address }
        }
        cursor = low
        guard low > 0 else { return nil }
        let place = places[low - 1]
        guard place.file != Int32.min else { return nil }
        let rowAddress = addresses.isEmpty ? base + UInt64(offsets[low - 1]) : addresses[low - 1]
        return Row(
            address: rowAddress, line: place.line, column: place.column, file: place.file, isSequenceEnd: false)
    }
}
