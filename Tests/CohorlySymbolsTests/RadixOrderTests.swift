import Testing

@testable import CohorlySymbols

/// `RadixOrder`: the same order as a comparison sort.
@Suite struct RadixOrderTests {
    /// Values sorted in place come out as `sorted()` gives them: small and 64-bit values, repeats, zeros.
    @Test func sortsValuesAsAComparisonSortDoes() {
        var generator = SystemRandomNumberGenerator()
        for (count, bits) in [(0, 8), (1, 8), (2, 64), (1000, 12), (5000, 24), (5000, 64)] {
            let mask: UInt64 = bits == 64 ? .max : (1 << UInt64(bits)) - 1
            var values = (0..<count).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) & mask }
            values += [0, mask, mask / 2, 0]
            let expected = values.sorted()
            RadixOrder.sort(&values)
            #expect(values == expected, "\(count) values of \(bits) bits")
        }
    }

    /// Values close together far from 0 (one unit's addresses: the keys count from the least) sort as `sorted()`.
    @Test func sortsValuesFarFromZero() {
        var generator = SeededGenerator(state: 0x5EED_0042)
        var values = (0..<3000).map { _ in 0x7f12_3400_0000 + UInt64.random(in: 0..<0x40000, using: &generator) }
        values += [0x7f12_3400_0000, 0x7f12_3403_ffff]
        let expected = values.sorted()
        RadixOrder.sort(&values)
        #expect(values == expected)
    }

    /// The symbol cache writer's merges give what one sort gives: a unit's ascending line bounds with its sorted
    /// scope bounds (and, should the first not ascend, both sorted together), and a window's two ascending runs
    /// (more runs are sorted).
    @Test func mergesGiveWhatASortGives() {
        var generator = SeededGenerator(state: 0x3E26_0042)
        for count in [0, 1, 7, 600] {
            let rows = (0..<count).map { _ in UInt64.random(in: 0..<5000, using: &generator) }.sorted()
            let scopes = (0..<count / 2 + 1).map { _ in UInt64.random(in: 0..<5000, using: &generator) }.sorted()
            #expect(DwarfIndex.merged(rows, scopes) == (rows + scopes).sorted(), "\(count)")
            let shuffled = rows.shuffled(using: &generator)
            #expect(DwarfIndex.merged(shuffled, scopes) == (rows + scopes).sorted(), "\(count), rows unordered")
            for runs in [[rows], [rows, scopes], [rows, scopes, rows]] {
                var window = runs.flatMap { $0 }
                DwarfIndex.AnswerBoundWalk.sortRuns(&window)
                #expect(window == runs.flatMap { $0 }.sorted(), "\(count), \(runs.count) runs")
            }
        }
    }

    /// Positions ordered by a key are stable: equal keys keep the order they had.
    @Test func ordersPositionsStablyByKey() {
        let keys: [UInt64] = [5, 1, 5, 0, 1, 1 << 40, 5]
        var order = (0..<Int32(keys.count)).map { $0 }
        RadixOrder.sort(&order) { keys[Int($0)] }
        #expect(order == [3, 1, 4, 0, 2, 6, 5])
    }
}
