#if canImport(Glibc)
    import Glibc
#endif

/// Bytes for a file descriptor, gathered in a fixed buffer and written when it fills (and at the end); or, with
/// no descriptor, gathered in memory (the buffer grows). For commands that print many small pieces, such as
/// `symbolicate --exe`.
package struct ByteOutput: ~Copyable {
    private var storage: UnsafeMutableBufferPointer<UInt8>
    /// How many bytes are gathered.
    private(set) var count = 0
    private let descriptor: Int32?

    package init(descriptor: Int32? = STDOUT_FILENO, capacity: Int = 1 << 16) {
        storage = .allocate(capacity: max(capacity, 64))
        self.descriptor = descriptor
    }

    deinit {
        if let descriptor, count > 0 {
            Console.write(UnsafeBufferPointer(rebasing: storage[0..<count]), to: descriptor)
        }
        storage.deallocate()
    }

    /// Writes what is gathered (no-op in memory).
    package mutating func flush() {
        guard let descriptor, count > 0 else { return }
        Console.write(UnsafeBufferPointer(rebasing: storage[0..<count]), to: descriptor)
        count = 0
    }

    /// The bytes gathered so far (in memory: everything appended).
    package func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try body(UnsafeBufferPointer(rebasing: storage[0..<count]))
    }

    /// Makes room for `needed` more bytes. The check is inlined at every append (they run per byte of
    /// `symbolicate --exe` output); ``grow(_:)`` is the rare rest.
    @inline(__always) private mutating func makeRoom(_ needed: Int) {
        if storage.count - count < needed { grow(needed) }
    }

    /// Writes out what is gathered (descriptor) or grows the buffer (memory) so that `needed` more bytes fit.
    private mutating func grow(_ needed: Int) {
        if descriptor != nil {
            flush()
            if needed <= storage.count { return }
        }
        let grown = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(storage.count * 2, count + needed))
        if let source = storage.baseAddress, let target = grown.baseAddress {
            target.update(from: source, count: count)
        }
        storage.deallocate()
        storage = grown
    }

    package mutating func append(_ byte: UInt8) {
        makeRoom(1)
        storage[count] = byte
        count += 1
    }

    package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let descriptor, bytes.count > storage.count {
            flush()
            Console.write(bytes, to: descriptor)
            return
        }
        makeRoom(bytes.count)
        guard let source = bytes.baseAddress, let target = storage.baseAddress else { return }
        (target + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// Appends text from a file (a name or path of a debug file) with its control characters escaped as
    /// ``TerminalText`` does (`\n`, `\r`, `\t`, `\x1b`, `\u{9b}`); text without any is copied as it is.
    package mutating func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        // The common case first: no byte that could start an escape (0xc2 leads a C1 control, U+0080…U+009F, but
        // also `©`, `°` and the like, which the loop below copies as they are).
        guard Self.mayNeedEscaping(bytes) else {
            append(bytes)
            return
        }
        func isC1(_ index: Int) -> Bool {
            bytes[index] == 0xc2 && index + 1 < bytes.count && (0x80...0x9f).contains(bytes[index + 1])
        }
        let hex = Array("0123456789abcdef".utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x0a: append("\\n")
            case 0x0d: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20, 0x7f:
                append("\\x")
                append(hex[Int(byte >> 4)])
                append(hex[Int(byte & 0xf)])
            case 0xc2 where isC1(index - 1):
                let next = bytes[index]
                index += 1
                append("\\u{")
                append(hex[Int(next >> 4)])
                append(hex[Int(next & 0xf)])
                append("}")
            default: append(byte)
            }
        }
    }

    /// Whether `bytes` hold a byte below 0x20, 0x7f or 0xc2. Eight bytes at a time (SWAR, a word's bytes tested
    /// at once): this scan runs over every name and path `symbolicate --exe` prints, and was its costliest step
    /// byte by byte (5.9 M of the 38.6 M instructions of 5,000 addresses). No library offers a multi-byte
    /// `memchr`; the word tests are the usual ones (a borrow can only flag a byte above one that matched, so
    /// "any" is exact).
    package static func mayNeedEscaping(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        /// Whether a byte of the 8 at `offset` may need escaping.
        @inline(__always) func test(_ offset: Int) -> Bool {
            let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            // A byte below n (≤ 0x80): subtracting n from each byte borrows into its high bit, which was clear.
            let below20 = (word &- ones &* 0x20) & ~word
            let not7f = word ^ ones &* 0x7f  // a zero byte where `word` has 0x7f: "below 1"
            let notC2 = word ^ ones &* 0xc2
            let is7f = (not7f &- ones) & ~not7f
            let isC2 = (notC2 &- ones) & ~notC2
            return (below20 | is7f | isC2) & highs != 0
        }
        guard bytes.count >= 8 else { return bytes.contains { $0 < 0x20 || $0 == 0x7f || $0 == 0xc2 } }
        var offset = 0
        while offset + 8 < bytes.count {
            if test(offset) { return true }
            offset += 8
        }
        return test(bytes.count - 8)  // the last 8 bytes, overlapping the words tested when not a whole word
    }

    package mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `0x` and the lowercase hexadecimal digits of `value`.
    package mutating func appendHex(_ value: UInt64) {
        makeRoom(18)
        storage[count] = UInt8(ascii: "0")
        storage[count + 1] = UInt8(ascii: "x")
        let digits = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
        var rest = value
        var index = count + 1 + digits
        for _ in 0..<digits {
            let digit = UInt8(truncatingIfNeeded: rest & 0xf)
            storage[index] = digit < 10 ? UInt8(ascii: "0") &+ digit : UInt8(ascii: "a") &+ digit &- 10
            rest >>= 4
            index &-= 1
        }
        count += 2 + digits
    }

    /// Appends the decimal digits of `value`.
    package mutating func appendDecimal(_ value: UInt64) {
        makeRoom(20)
        var digits = 1
        var power: UInt64 = 10
        while digits < 20 && value >= power {
            digits += 1
            power = power &* 10
        }
        var rest = value
        var index = count &+ digits
        repeat {
            index &-= 1
            storage[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        } while rest > 0
        count += digits
    }
}
