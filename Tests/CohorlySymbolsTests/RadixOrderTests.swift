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

    /// Positions ordered by a key are stable: equal keys keep the order they had.
    @Test func ordersPositionsStablyByKey() {
        let keys: [UInt64] = [5, 1, 5, 0, 1, 1 << 40, 5]
        var order = (0..<Int32(keys.count)).map { $0 }
        RadixOrder.sort(&order) { keys[Int($0)] }
        #expect(order == [3, 1, 4, 0, 2, 6, 5])
    }
}
