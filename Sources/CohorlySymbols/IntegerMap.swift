/// A map from 64-bit keys (DIE offsets, addresses of names in a mapped file) to 32-bit values, for the
/// symbolicator's name caches, asked once per scope looked up: open addressing with linear probing and a
/// multiplicative hash, a fraction of `Dictionary`'s cost per lookup (no seeded SipHash per key). At most 3/4
/// full. The key `UInt64.max` marks an empty slot and is never stored (a lookup of it finds nothing).
struct IntegerMap {
    private var keys: [UInt64] = []
    private var values: [Int32] = []
    private var count = 0
    /// 64 minus log2 of the capacity: the hash's top bits pick the slot.
    private var shift: UInt64 = 64
    private static let empty = UInt64.max

    /// The value stored for `key`, or nil.
    subscript(key: UInt64) -> Int32? {
        guard !keys.isEmpty else { return nil }
        var slot = slotOf(key)
        while true {
            let found = keys[slot]
            if found == key { return key == IntegerMap.empty ? nil : values[slot] }
            if found == IntegerMap.empty { return nil }
            slot = (slot + 1) & (keys.count - 1)
        }
    }

    /// Stores `value` for `key` (replacing a value stored before).
    mutating func set(_ value: Int32, for key: UInt64) {
        guard key != IntegerMap.empty else { return }
        if (count + 1) * 4 > keys.count * 3 { grow() }
        var slot = slotOf(key)
        while keys[slot] != IntegerMap.empty && keys[slot] != key { slot = (slot + 1) & (keys.count - 1) }
        if keys[slot] == IntegerMap.empty { count += 1 }
        keys[slot] = key
        values[slot] = value
    }

    private func slotOf(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// Doubles the capacity (1,024 slots at first) and stores every key again.
    private mutating func grow() {
        let old = (keys: keys, values: values)
        let capacity = max(1024, keys.count * 2)
        keys = Array(repeating: IntegerMap.empty, count: capacity)
        values = Array(repeating: 0, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        count = 0
        for (key, value) in zip(old.keys, old.values) where key != IntegerMap.empty { set(value, for: key) }
    }
}
