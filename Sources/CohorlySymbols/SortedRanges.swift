/// Address ranges that may overlap or nest, sorted by start, answering "which range contains this address":
/// a binary search for the last range starting at or before it, then a walk back while an earlier range could
/// still reach it (`maxHigh[i]`, the largest end among the first i + 1 ranges, says when none can). Used for
/// compile units in a file and physical functions in a unit.
struct SortedRanges {
    /// The ranges, sorted by `low`.
    let ranges: [UnitIndex.Range]
    private let maxHigh: [UInt64]

    init(_ unsorted: [UnitIndex.Range]) {
        ranges = unsorted.sorted { $0.low < $1.low }
        var running: UInt64 = 0
        maxHigh = ranges.map {
            running = max(running, $0.high)
            return running
        }
    }

    /// Where the last search ended (see ``partitionPoint(_:from:_:)``).
    private var cursor = 0

    /// The scope of a range containing `address` (of those, the one starting last), or -1.
    mutating func scope(containing address: UInt64) -> Int32 {
        cursor = partitionPoint(0..<ranges.count, from: cursor) { ranges[$0].low <= address }
        var index = cursor - 1
        while index >= 0 && maxHigh[index] > address {
            if ranges[index].high > address { return ranges[index].scope }
            index -= 1
        }
        return -1
    }
}

/// The first position in `range` for which `isBefore` is false, all positions for which it is true coming first
/// (a binary search: with `isBefore = { sorted[$0] <= x }`, the number of elements not after x).
@inline(__always)
func partitionPoint(_ range: Range<Int>, _ isBefore: (Int) -> Bool) -> Int {
    var low = range.lowerBound
    var high = range.upperBound
    while low < high {
        let mid = low + (high - low) / 2
        if isBefore(mid) { low = mid + 1 } else { high = mid }
    }
    return low
}

/// ``partitionPoint(_:_:)`` searching outward from `hint`, the answer of a previous search: for ascending
/// searches (a batch's addresses in order) the answer is usually a few positions further, found by doubling
/// steps from the hint over cache lines just read, instead of a search over the whole range. Past 64 positions,
/// or when the answer lies before the hint, a plain search over the rest.
@inline(__always)
func partitionPoint(_ range: Range<Int>, from hint: Int, _ isBefore: (Int) -> Bool) -> Int {
    guard hint > range.lowerBound, hint <= range.upperBound else { return partitionPoint(range, isBefore) }
    if !isBefore(hint - 1) { return partitionPoint(range.lowerBound..<hint - 1, isBefore) }
    // Every position before `low` is before the answer; the answer is at most `high`.
    var low = hint
    var high = hint
    var step = 1
    while high < range.upperBound && isBefore(high) {
        low = high + 1
        guard step < 64 else { return partitionPoint(low..<range.upperBound, isBefore) }
        high = min(high + step, range.upperBound)
        step *= 2
    }
    return partitionPoint(low..<high, isBefore)
}
