/// `.debug_aranges`: the address ranges of each compile unit as its producer listed them, one set per unit,
/// keyed by the offset of the unit's header in `.debug_info`. When a file has the section, its sets are the
/// first source of the address→unit table (as LLVM's `DWARFDebugAranges`), and only units it leaves out have
/// their own `DW_AT_low_pc`/`high_pc`/`ranges` read. gcc writes the section; clang and swiftc do not.
enum DebugAranges {
    /// One listed range of the unit whose header is at `unitOffset`.
    struct Entry {
        var unitOffset: UInt64
        var low: UInt64
        var high: UInt64
    }

    /// The ranges listed in `section` (little-endian), without empty ranges and linker tombstones (address 0 or
    /// ≥ -2: code that was discarded); nil when the section cannot be trusted, and the units' own ranges serve
    /// then: a set is malformed (a length past the section, a version other than 2, segments), its addresses are
    /// not `addressSize` bytes (the file's), or ranges listed for two different units overlap (an address
    /// would then have two units; the units' own ranges decide). A set naming no unit is ignored by the caller.
    static func read(_ section: DieScanner.Bounds, addressSize expected: Int) -> [Entry]? {
        var entries: [Entry] = []
        var cursor = section.start
        let end = section.end
        while cursor < end {
            let setStart = cursor
            guard end - cursor >= 4 else { return nil }
            var length = little(cursor, 4)
            cursor += 4
            var offsetSize = 4
            if length == 0xFFFF_FFFF {
                guard end - cursor >= 8 else { return nil }
                length = little(cursor, 8)
                cursor += 8
                offsetSize = 8
            } else if length >= 0xFFFF_FFF0 {
                return nil
            }
            guard length <= UInt64(end - cursor) else { return nil }
            let setEnd = cursor + Int(length)
            guard setEnd - cursor >= 2 + offsetSize + 2, little(cursor, 2) == 2 else { return nil }
            let unitOffset = little(cursor + 2, offsetSize)
            cursor += 2 + offsetSize
            let addressSize = Int(cursor[0])
            guard addressSize == expected, cursor[1] == 0 else { return nil }  // no segments
            cursor += 2
            // The pairs start at a multiple of their size from the set's start.
            let pairSize = 2 * addressSize
            let padding = (pairSize - (cursor - setStart) % pairSize) % pairSize
            guard setEnd - cursor >= padding else { return nil }
            cursor += padding
            while setEnd - cursor >= pairSize {
                let low = little(cursor, addressSize)
                let size = little(cursor + addressSize, addressSize)
                cursor += pairSize
                if low == 0 && size == 0 { break }
                let (high, overflow) = low.addingReportingOverflow(size)
                if !overflow && high > low && low != 0 && low < UInt64.max - 1 {
                    entries.append(Entry(unitOffset: unitOffset, low: low, high: high))
                }
            }
            cursor = setEnd
        }
        return listsEachAddressOnce(entries) ? entries : nil
    }

    /// Whether no two ranges of different units overlap (ranges of one unit may: they name the same unit).
    private static func listsEachAddressOnce(_ entries: [Entry]) -> Bool {
        let sorted = entries.sorted { $0.low < $1.low }
        // The range reaching furthest so far, and its unit.
        var reach: (high: UInt64, unit: UInt64)?
        for entry in sorted {
            if let last = reach, entry.low < last.high {
                if entry.unitOffset != last.unit { return false }
                if entry.high > last.high { reach = (entry.high, entry.unitOffset) }
            } else {
                reach = (entry.high, entry.unitOffset)
            }
        }
        return true
    }

    /// The little-endian value of `size` bytes at `position` (the caller checked they are in the section).
    private static func little(_ position: UnsafePointer<UInt8>, _ size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<size { value |= UInt64(position[index]) << UInt64(8 * index) }
        return value
    }
}
