/// Positions put in ascending order of a 64-bit key by a stable least-significant-digit radix sort: one pass per
/// byte that is not zero in every key (three for the addresses of a typical binary, against a comparison sort's
/// seventeen rounds of comparisons over 100,000 items). Stable, so sorting by one key and then by another orders
/// by the second key, then the first, then the positions' order before.
enum RadixOrder {
    /// Reorders `order` (positions of items) by ascending `key(position)`, keeping the present order among
    /// equal keys.
    static func sort(_ order: inout [Int32], by key: (Int32) -> UInt64) {
        sortItems(&order, by: key)
    }

    /// Sorts `values` ascending (the values their own keys: for the symbol cache's writer, whose million answer
    /// bounds a comparison sort took several times as long to order).
    /// The keys are counted from the least value, so values close together (one unit's addresses) take fewer
    /// passes.
    static func sort(_ values: inout [UInt64]) {
        guard let least = values.min() else { return }
        sortItems(&values) { $0 &- least }
    }

    /// Reorders `items` by ascending `key(item)`, stably.
    private static func sortItems<Item>(_ items: inout [Item], by key: (Item) -> UInt64) {
        var used: UInt64 = 0
        for item in items { used |= key(item) }
        let significant = 64 - used.leadingZeroBitCount
        guard significant > 0, items.count > 1 else { return }
        var spare = items
        var counts = [Int](repeating: 0, count: 257)
        counts.withUnsafeMutableBufferPointer { counts in
            for shift in stride(from: 0, to: significant, by: 8) {
                items.withUnsafeBufferPointer { from in
                    spare.withUnsafeMutableBufferPointer { to in
                        pass(from, to, counts, shift: UInt64(shift), key)
                    }
                }
                swap(&items, &spare)
            }
        }
    }

    /// One pass: `from` ordered by the byte of the key at `shift`, into `to`.
    @inline(__always) private static func pass<Item>(
        _ from: UnsafeBufferPointer<Item>, _ to: UnsafeMutableBufferPointer<Item>,
        _ counts: UnsafeMutableBufferPointer<Int>, shift: UInt64, _ key: (Item) -> UInt64
    ) {
        counts.update(repeating: 0)
        for item in from { counts[Int(truncatingIfNeeded: (key(item) >> shift) & 0xff) &+ 1] &+= 1 }
        for digit in 1..<257 { counts[digit] &+= counts[digit &- 1] }
        for item in from {
            let digit = Int(truncatingIfNeeded: (key(item) >> shift) & 0xff)
            to[counts[digit]] = item
            counts[digit] &+= 1
        }
    }
}
