/// The names and paths a symbolicator has produced, each stored once and referred to by a number: as a Swift
/// string (for ``SymbolicatedFrame``) and as UTF-8 bytes in one buffer (for tools that write many frames and
/// should not build or copy a string per frame).
package final class TextTable {
    /// The texts by number.
    package private(set) var strings: [String] = []
    /// Every text's UTF-8 bytes, one after the other; text `n` is `utf8[starts[n]..<starts[n + 1]]`.
    package private(set) var utf8: [UInt8] = []
    private var starts: [Int] = [0]
    private var numbers: [String: Int32] = [:]

    init() {}

    /// The number of `text`, adding it when it is new (for texts met again and again, such as paths).
    func number(of text: String) -> Int32 {
        if let known = numbers[text] { return known }
        let number = add(text)
        numbers[text] = number
        return number
    }

    /// Adds `text` under a new number, without looking for it first (for texts the caller already keeps
    /// unique, such as names cached per symbol: hashing long mangled names costs more than storing a few twice).
    func add(_ text: String) -> Int32 {
        let number = Int32(strings.count)
        strings.append(text)
        utf8.append(contentsOf: text.utf8)
        starts.append(utf8.count)
        return number
    }

    /// The text numbered `number`, or nil for -1.
    package func string(_ number: Int32) -> String? {
        number >= 0 ? strings[Int(number)] : nil
    }

    /// Appends the UTF-8 bytes of the text numbered `number` to `output`, or `placeholder` for -1.
    package func append(_ number: Int32, to output: inout [UInt8], placeholder: StaticString = "??") {
        guard number >= 0 else {
            output.append(
                contentsOf: UnsafeBufferPointer(start: placeholder.utf8Start, count: placeholder.utf8CodeUnitCount))
            return
        }
        let start = starts[Int(number)]
        let end = starts[Int(number) + 1]
        utf8.withUnsafeBufferPointer { output.append(contentsOf: UnsafeBufferPointer(rebasing: $0[start..<end])) }
    }
}

/// One frame as numbers in a ``TextTable``: what ``ModuleSymbolicator/records(for:isReturnAddress:into:)``
/// gives batch tools instead of ``SymbolicatedFrame``s.
package struct FrameRecord {
    /// The readable (demangled) function name (-1: unknown).
    package var function: Int32
    /// The function name as stored in the file (-1: unknown).
    package var rawFunction: Int32
    /// The source path (-1: unknown).
    package var file: Int32
    package var line: UInt32
    package var column: UInt32
    /// True for every frame but the last of an address.
    package var isInlined: Bool
    /// Set when the name came from the symbol table: the offset from the symbol's start.
    package var symbolOffset: UInt64?
}

/// The frames of many addresses (see ``ModuleSymbolicator/records(for:isReturnAddress:)``): those of address
/// `i` are `records[bounds[i]]`.
package struct FrameBatch {
    package var records: [FrameRecord]
    package var bounds: [Range<Int>]
}
