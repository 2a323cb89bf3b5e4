/// Positions put in ascending order of a 64-bit key by a stable least-significant-digit radix sort: one pass per
/// byte that is not zero in every key (three for the addresses of a typical binary, against a comparison sort's
/// seventeen rounds of comparisons over 100,000 items). Stable, so sorting by one key and then by another orders
/// by the second key, then the first, then the positions' order before.
enum RadixOrder {
    /// Reorders `order` (positions of items) by ascending `key(position)`, keeping the present order among
    /// equal keys.
    static func sort(_ order: inout [Int32], by key: (Int32) -> UInt64) {
        var used: UInt64 = 0
        for position in order { used |= key(position) }
        let significant = 64 - used.leadingZeroBitCount
        guard significant > 0, order.count > 1 else { return }
        var spare = order
        var counts = [Int](repeating: 0, count: 257)
        counts.withUnsafeMutableBufferPointer { counts in
            for shift in stride(from: 0, to: significant, by: 8) {
                order.withUnsafeBufferPointer { from in
                    spare.withUnsafeMutableBufferPointer { to in
                        pass(from, to, counts, shift: UInt64(shift), key)
                    }
                }
                swap(&order, &spare)
            }
        }
    }

    /// Sorts `values` ascending (the same passes, the values their own keys: for the symbol cache's writer, whose
    /// millions of answer bounds a comparison sort took several times as long to order).
    static func sort(_ values: inout [UInt64]) {
        var used: UInt64 = 0
        for value in values { used |= value }
        let significant = 64 - used.leadingZeroBitCount
        guard significant > 0, values.count > 1 else { return }
        var spare = values
        var counts = [Int](repeating: 0, count: 257)
        counts.withUnsafeMutableBufferPointer { counts in
            for shift in stride(from: 0, to: significant, by: 8) {
                values.withUnsafeBufferPointer { from in
                    spare.withUnsafeMutableBufferPointer { to in
                        counts.update(repeating: 0)
                        for value in from {
                            counts[Int(truncatingIfNeeded: (value >> UInt64(shift)) & 0xff) &+ 1] &+= 1
                        }
                        for digit in 1..<257 { counts[digit] &+= counts[digit &- 1] }
                        for value in from {
                            let digit = Int(truncatingIfNeeded: (value >> UInt64(shift)) & 0xff)
                            to[counts[digit]] = value
                            counts[digit] &+= 1
                        }
                    }
                }
                swap(&values, &spare)
            }
        }
    }

    /// One pass: `from` ordered by the byte of the key at `shift`, into `to`.
    @inline(__always) private static func pass(
        _ from: UnsafeBufferPointer<Int32>, _ to: UnsafeMutableBufferPointer<Int32>,
        _ counts: UnsafeMutableBufferPointer<Int>, shift: UInt64, _ key: (Int32) -> UInt64
    ) {
        counts.update(repeating: 0)
        for position in from { counts[Int(truncatingIfNeeded: (key(position) >> shift) & 0xff) &+ 1] &+= 1 }
        for digit in 1..<257 { counts[digit] &+= counts[digit &- 1] }
        for position in from {
            let digit = Int(truncatingIfNeeded: (key(position) >> shift) & 0xff)
            to[counts[digit]] = position
            counts[digit] &+= 1
        }
    }
}
