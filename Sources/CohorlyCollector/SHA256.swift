/// SHA-256 (FIPS 180-4), fed incrementally, so files are hashed while they stream and never held whole.
/// Shared with the CLI (`package`), which hashes what it uploads with the same code the collector checks with.
/// Written with raw pointers and plain loops so it stays usable in debug builds (tests hash whole files).
package final class SHA256 {
    private let state = UnsafeMutablePointer<UInt32>.allocate(capacity: 8)
    private let schedule = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
    private let pending = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
    private var pendingCount = 0
    private var length: UInt64 = 0

    /// A fresh hash.
    package init() {
        let initial: [UInt32] = [
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
        ]
        for index in 0..<8 { state[index] = initial[index] }
    }

    deinit {
        state.deallocate()
        schedule.deallocate()
        pending.deallocate()
    }

    /// Hashes `bytes` after everything fed so far.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count > 0 else { return }
        let count = bytes.count
        length &+= UInt64(count)
        var offset = 0
        if pendingCount > 0 {
            let take = min(64 - pendingCount, count)
            (pending + pendingCount).update(from: base, count: take)
            pendingCount += take
            offset = take
            guard pendingCount == 64 else { return }
            compress(UnsafePointer(pending))
            pendingCount = 0
        }
        while count - offset >= 64 {
            compress(base + offset)
            offset += 64
        }
        if offset < count {
            pending.update(from: base + offset, count: count - offset)
            pendingCount = count - offset
        }
    }

    /// Hashes `bytes` after everything fed so far.
    package func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest as 64 lowercase hex digits (the hash can't be fed afterwards).
    package func finalizeHex() -> String {
        let bits = length &* 8
        var tail: [UInt8] = [0x80]
        let used = (pendingCount + 1) % 64
        tail += [UInt8](repeating: 0, count: used <= 56 ? 56 - used : 120 - used)
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> shift)) }
        tail.withUnsafeBytes { update($0) }
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for index in 0..<8 {
            let word = state[index]
            for shift in stride(from: 28, through: 0, by: -4) { out.append(digits[Int(word >> UInt32(shift) & 0xf)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The hex digest of `bytes`.
    package static func hex(_ bytes: [UInt8]) -> String {
        let hash = SHA256()
        hash.update(bytes)
        return hash.finalizeHex()
    }

    // Written once, then only read.
    nonisolated(unsafe) private static let roundConstants: UnsafeMutablePointer<UInt32> = {
        let values: [UInt32] = [
            0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
            0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
            0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
            0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
            0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
            0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
            0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
            0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
        ]
        let pointer = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
        pointer.initialize(from: values, count: 64)
        return pointer
    }()

    /// One 64-byte block.
    private func compress(_ block: UnsafePointer<UInt8>) {
        let w = schedule
        let k = Self.roundConstants
        var index = 0
        while index < 16 {
            let p = block + index &* 4
            w[index] = UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3])
            index &+= 1
        }
        while index < 64 {
            let x = w[index &- 15]
            let y = w[index &- 2]
            let s0 = (x >> 7 | x << 25) ^ (x >> 18 | x << 14) ^ (x >> 3)
            let s1 = (y >> 17 | y << 15) ^ (y >> 19 | y << 13) ^ (y >> 10)
            w[index] = w[index &- 16] &+ s0 &+ w[index &- 7] &+ s1
            index &+= 1
        }
        var a = state[0]
        var b = state[1]
        var c = state[2]
        var d = state[3]
        var e = state[4]
        var f = state[5]
        var g = state[6]
        var h = state[7]
        index = 0
        while index < 64 {
            let s1 = (e >> 6 | e << 26) ^ (e >> 11 | e << 21) ^ (e >> 25 | e << 7)
            let t1 = h &+ s1 &+ ((e & f) ^ (~e & g)) &+ k[index] &+ w[index]
            let s0 = (a >> 2 | a << 30) ^ (a >> 13 | a << 19) ^ (a >> 22 | a << 10)
            let t2 = s0 &+ ((a & b) ^ (a & c) ^ (b & c))
            h = g
            g = f
            f = e
            e = d &+ t1
            d = c
            c = b
            b = a
            a = t1 &+ t2
            index &+= 1
        }
        state[0] &+= a
        state[1] &+= b
        state[2] &+= c
        state[3] &+= d
        state[4] &+= e
        state[5] &+= f
        state[6] &+= g
        state[7] &+= h
    }
}
