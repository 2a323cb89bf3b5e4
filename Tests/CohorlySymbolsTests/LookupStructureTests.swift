import Testing

@testable import CohorlySymbols

/// The small structures of the lookup path give the answers of their plain counterparts.
@Suite struct LookupStructureTests {
    /// A search that starts from a previous answer finds what a search over the whole range finds, whatever
    /// the hint: before, at, just after or far after the answer, or out of the range.
    @Test func searchFromHintEqualsPlainSearch() {
        var generator = SeededGenerator(state: 0x5EED)
        for size in [0, 1, 2, 3, 17, 64, 65, 200, 1_000] {
            var values = (0..<size).map { _ in UInt32.random(in: 0..<500, using: &generator) }
            values.sort()
            for _ in 0..<200 {
                let target = UInt32.random(in: 0..<520, using: &generator)
                let plain = partitionPoint(0..<size) { values[$0] <= target }
                for hint in [-3, 0, 1, plain - 70, plain - 1, plain, plain + 1, plain + 63, plain + 64, size, size + 5]
                    + [Int.random(in: 0...size, using: &generator)]
                {
                    let found = partitionPoint(0..<size, from: hint) { values[$0] <= target }
                    #expect(found == plain, "size \(size), target \(target), hint \(hint)")
                }
            }
        }
    }

    /// Ascending lookups (a batch's addresses in order) through the cursor answer as fresh lookups do.
    @Test func sortedRangesWithCursorAnswerAsWithout() {
        var generator = SeededGenerator(state: 0xC0FFEE)
        let ranges = (0..<500).map { index -> UnitIndex.Range in
            let low = UInt64.random(in: 0..<100_000, using: &generator)
            return UnitIndex.Range(
                low: low, high: low + UInt64.random(in: 1..<400, using: &generator), scope: Int32(index))
        }
        var walked = SortedRanges(ranges)
        var addresses = (0..<3_000).map { _ in UInt64.random(in: 0..<101_000, using: &generator) }
        addresses += addresses.sorted()
        for address in addresses {
            var fresh = SortedRanges(ranges)
            #expect(walked.scope(containing: address) == fresh.scope(containing: address))
        }
    }

    /// The name caches' map keeps what a dictionary keeps, through growth and colliding slots.
    @Test func integerMapEqualsDictionary() {
        var generator = SeededGenerator(state: 0xAB)
        var map = IntegerMap()
        var reference: [UInt64: Int32] = [:]
        for step in 0..<20_000 {
            // Offsets in a narrow band (many share the hash's top bits), pointers, and replaced values.
            let key: UInt64 =
                step % 3 == 0
                ? UInt64.random(in: 0..<4_096, using: &generator) * 8
                : UInt64.random(in: 0x7f00_0000_0000..<0x7f00_0100_0000, using: &generator)
            let value = Int32.random(in: -1..<1_000_000, using: &generator)
            map.set(value, for: key)
            reference[key] = value
        }
        for (key, value) in reference { #expect(map[key] == value) }
        for _ in 0..<2_000 {
            let key = UInt64.random(in: 0x8000_0000_0000..<0x9000_0000_0000, using: &generator)
            #expect(map[key] == nil)
        }
        map.set(7, for: UInt64.max)
        #expect(map[UInt64.max] == nil)
        #expect(IntegerMap()[42] == nil)
    }
}
