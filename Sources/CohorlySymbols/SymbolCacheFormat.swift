/// The layout of a symbol cache file (`cohorly debug-files cache`; docs/symbol-cache.md), shared by
/// ``SymbolCacheWriter`` and ``SymbolCacheReader``: a fixed header of little-endian 64-bit fields giving where
/// each table is, then the tables. Everything a lookup reads is addressed from the header, so the file is read in
/// place (mapped), never parsed whole.
///
/// - Address table: the starts of the blocks (`UInt64` each, ascending) and where each block's rows begin in the
///   row data (`UInt32` each, one more than there are blocks: the last is the row data's length).
/// - Row data: per block, the number of rows, then per row its length in bytes of code and its answer — the
///   whole inline chain, outermost frame first, encoded against the row before (see ``FrameFlags``).
/// - Files: `UInt32` offsets into NUL-terminated paths.
/// - Names: per name one flags byte (``NameFlags``), and the names in compressed blocks of ``namesPerBlock``
///   names, each `full\0raw\0` (versions 3 and 4) or `full\0raw\0simplified\0` (versions 1 and 2), in zstd
///   frames or zlib streams (``Version``).
enum SymbolCacheFormat {
    /// The file's first 8 bytes.
    static let magic: [UInt8] = Array("CLYSYMC\0".utf8)

    /// How name blocks are compressed.
    enum NameCompression: Sendable {
        /// Each block one zlib stream (RFC 1950): the writer's choice only when libzstd cannot be loaded.
        case zlib
        /// Each block one zstd frame (RFC 8878): several times faster to make and to read than zlib's, and as
        /// small.
        case zstd
    }

    /// The format versions (a reader reads all four): they differ only in how the name blocks are compressed and
    /// whether each name carries its simplified form. The writer writes version 3, or 4 where libzstd cannot be loaded.
    /// Versions 3 and 4 hold no simplified form: no reader ever printed the stored one (a simplified name is made
    /// from the raw one when it is printed, as from DWARF), and making it was a fifth of the writer's work.
    enum Version: UInt32, CaseIterable, Sendable {
        /// Version 1: zlib, each name `full\0raw\0simplified\0`.
        case zlibWithSimplifiedNames = 1
        /// Version 2: zstd, each name `full\0raw\0simplified\0`.
        case zstdWithSimplifiedNames = 2
        /// Version 3: zstd, each name `full\0raw\0`.
        case zstd = 3
        /// Version 4: zlib, each name `full\0raw\0`.
        case zlib = 4

        /// The version the writer writes with `compression`.
        init(writtenWith compression: NameCompression) {
            self = compression == .zstd ? .zstd : .zlib
        }

        var compression: NameCompression {
            switch self {
            case .zlibWithSimplifiedNames, .zlib: .zlib
            case .zstdWithSimplifiedNames, .zstd: .zstd
            }
        }

        /// How many NUL-terminated strings each name has in its block.
        var stringsPerName: Int {
            switch self {
            case .zlibWithSimplifiedNames, .zstdWithSimplifiedNames: 3
            case .zstd, .zlib: 2
            }
        }
    }

    /// Magic, version, header size: the bytes before the fields.
    static let prefixSize = 16

    /// The header's fields, in order, each a little-endian `UInt64` after the prefix.
    enum Field: Int, CaseIterable {
        case buildIdOffset, buildIdLength
        case blockCount, blockStartsOffset, blockRowOffsetsOffset
        case rowsOffset, rowsLength
        case fileCount, fileOffsetsOffset, fileStringsOffset, fileStringsLength
        case nameCount, nameFlagsOffset
        case nameBlockCount, nameBlockTableOffset, namesDataOffset, namesDataLength, namesPerBlock
        case sourceRootOffset, sourceRootLength
    }

    /// The header's size in bytes.
    static let headerSize = prefixSize + Field.allCases.count * 8
    /// Bytes per entry of the name block table: offset in the names data (`UInt64`), compressed and
    /// uncompressed size (`UInt32` each).
    static let nameBlockEntrySize = 16
    /// Names per compressed block (the writer's choice: the header says how many, so readers take any): small
    /// enough that one lookup inflates little (~16 KB on swift-format), large enough to compress well and fast
    /// (Swift names of one area of the code share their modules and types). On swift-format 64 names a block
    /// compress its 20.5 MB of names to 2.4 MB (16: 3.6 MB) at 1.7× zstd's speed on 16 and inflate at twice the
    /// speed; looking 1,000 addresses up costs 9 ms more, 20,000 cost 15 ms less (BENCHMARKS.md, "Symbol cache").
    static let namesPerBlock = 64
    /// Rows per block at most: a lookup decodes at most this many rows.
    static let rowsPerBlock = 32
    /// The most frames one row's chain may have (a reader stops at a deeper one: a corrupt file).
    static let maximumChainDepth = 4096
    /// The most bytes a name block may inflate to (a reader refuses a larger one).
    static let maximumNameBlockSize = 1 << 24

    /// Per frame of a row: which parts follow, and which are the same as the reference frame's (the frame at
    /// the same depth of the row before).
    struct FrameFlags: OptionSet {
        let rawValue: UInt8
        /// The frame has a name (else `??`).
        static let hasName = FrameFlags(rawValue: 0x01)
        /// The name is the reference frame's (no name number follows).
        static let sameName = FrameFlags(rawValue: 0x02)
        /// The frame has a file.
        static let hasFile = FrameFlags(rawValue: 0x04)
        /// The file is the reference frame's (no file number follows).
        static let sameFile = FrameFlags(rawValue: 0x08)
        /// The frame was inlined into the next (outer) one.
        static let inlined = FrameFlags(rawValue: 0x10)
        /// The name came from the symbol table: the offset from the symbol's start at the row's first address
        /// follows.
        static let symbolOffset = FrameFlags(rawValue: 0x20)
    }

    /// Per name: what kind of function it names.
    struct NameFlags: OptionSet {
        let rawValue: UInt8
        /// Code the compiler made: a thunk, a partial application, a protocol witness, a merged or outlined copy
        /// (``AppCode/isCompilerMade(_:)``).
        static let compilerMade = NameFlags(rawValue: 0x01)
        /// A Swift runtime trap's artificial frame (`Swift runtime failure: …`).
        static let runtimeFailure = NameFlags(rawValue: 0x02)
    }
}

/// Little-endian integers and LEB128 appended to a byte array (the writer's side of the format).
extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        var value = value.littleEndian
        Swift.withUnsafeBytes(of: &value) { append(contentsOf: $0) }
    }

    mutating func appendULEB(_ value: UInt64) { LEB128.encode(value) { append($0) } }

    mutating func appendSLEB(_ value: Int64) { LEB128.encode(value) { append($0) } }
}

/// LEB128 encoding, each byte handed to `emit` (to an array, or to the writer's rows through a pointer).
enum LEB128 {
    @inline(__always) static func encode(_ value: UInt64, _ emit: (UInt8) -> Void) {
        var rest = value
        repeat {
            var byte = UInt8(truncatingIfNeeded: rest & 0x7f)
            rest >>= 7
            if rest != 0 { byte |= 0x80 }
            emit(byte)
        } while rest != 0
    }

    @inline(__always) static func encode(_ value: Int64, _ emit: (UInt8) -> Void) {
        var rest = value
        while true {
            let byte = UInt8(truncatingIfNeeded: rest & 0x7f)
            rest >>= 7
            let done = (rest == 0 && byte & 0x40 == 0) || (rest == -1 && byte & 0x40 != 0)
            emit(done ? byte : byte | 0x80)
            if done { return }
        }
    }
}

/// A bounded reader of the row data (the reader's side): every read checks the end, and a value that does not
/// fit ends the cursor (`failed`), so a corrupt file yields no answer, never a fault.
struct SymbolCacheCursor {
    private(set) var position: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    private(set) var failed = false

    init(start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) {
        position = start
        self.end = end
    }

    mutating func byte() -> UInt8 {
        guard !failed, position < end else {
            failed = true
            return 0
        }
        defer { position += 1 }
        return position.pointee
    }

    mutating func uleb() -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = byte()
            if failed { return 0 }
            if shift < 64 { result |= UInt64(next & 0x7f) << shift } else if next & 0x7f != 0 { failed = true }
            if next & 0x80 == 0 { return result }
            shift += 7
            if shift > 70 {
                failed = true
                return 0
            }
        }
    }

    mutating func sleb() -> Int64 {
        var result: Int64 = 0
        var shift: Int64 = 0
        var next: UInt8 = 0
        repeat {
            next = byte()
            if failed { return 0 }
            if shift < 64 { result |= Int64(next & 0x7f) << shift }
            shift += 7
            if shift > 70 {
                failed = true
                return 0
            }
        } while next & 0x80 != 0
        if shift < 64 && next & 0x40 != 0 { result |= ~Int64(0) << shift }
        return result
    }

    /// A ULEB128 that must fit in `limit` (else the cursor fails and 0 is returned).
    mutating func uleb(below limit: UInt64) -> UInt64 {
        let value = uleb()
        guard value < limit else {
            failed = true
            return 0
        }
        return value
    }
}
