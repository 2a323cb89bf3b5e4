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
        // The common case first, in one plain pass (no closure per byte): no byte that could start an escape.
        // 0xc2 leads a C1 control (U+0080…U+009F) but also `©`, `°` and the like, which the loop below copies.
        var plain = true
        for byte in bytes where byte < 0x20 || byte == 0x7f || byte == 0xc2 {
            plain = false
            break
        }
        guard !plain else {
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

    package mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `0x` and the lowercase hexadecimal digits of `value`.
    package mutating func appendHex(_ value: UInt64) {
        makeRoom(18)
        storage[count] = UInt8(ascii: "0")
        storage[count + 1] = UInt8(ascii: "x")
        let digits = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
        for index in 0..<digits {
            let digit = UInt8(truncatingIfNeeded: (value >> UInt64(4 * (digits - 1 - index))) & 0xf)
            storage[count + 2 + index] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
        }
        count += 2 + digits
    }

    /// Appends the decimal digits of `value`.
    package mutating func appendDecimal(_ value: UInt64) {
        makeRoom(20)
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        rest = value
        for index in stride(from: count + digits - 1, through: count, by: -1) {
            storage[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        count += digits
    }
}
