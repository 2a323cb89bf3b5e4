import CZlib
import CZstd

#if canImport(Glibc)
    import Glibc
#endif

/// Facts about a symbol cache file (``SymbolCacheWriter``), without looking anything up.
public enum SymbolCacheFile {
    /// The GNU build id the cache at `path` was made for.
    /// - Throws: ``SymbolsError/badSymbolCache(path:reason:)`` when it is no usable cache (or cannot be opened).
    public static func buildId(at path: String) throws(SymbolsError) -> [UInt8] {
        try SymbolCacheReader(path: path).buildId
    }
}

/// Answers addresses from a symbol cache file (``SymbolCacheFormat``, versions 1 to 4), mapped and read in place:
/// opening checks the header and that every table lies inside the file; a lookup binary-searches the block
/// starts, decodes at most one block's rows and inflates the name blocks it names (each once, kept while the
/// reader lives). Every read of the file is bounded, so a corrupt cache yields no answer, never a fault. Not
/// thread-safe.
final class SymbolCacheReader {
    /// The file's path.
    let path: String
    /// The GNU build id the cache was made for.
    let buildId: [UInt8]
    /// The root package's directory of the program (see ``ModuleSymbolicator/sourceRoot``), when it was known.
    let sourceRoot: String?

    private let base: UnsafeRawPointer
    private let size: Int
    private let blockCount: Int
    private let blockStarts: UnsafeRawPointer
    private let blockRowOffsets: UnsafeRawPointer
    private let rows: UnsafePointer<UInt8>
    private let rowsLength: Int
    private let fileCount: Int
    private let fileOffsets: UnsafeRawPointer
    private let fileStrings: UnsafePointer<CChar>
    private let fileStringsLength: Int
    let nameCount: Int
    private let nameFlags: UnsafePointer<UInt8>
    private let nameBlockCount: Int
    private let nameBlockTable: UnsafeRawPointer
    private let namesData: UnsafePointer<UInt8>
    private let namesDataLength: Int
    private let namesPerBlock: Int
    /// The file's format version (how its name blocks are compressed, and what each name holds).
    let version: SymbolCacheFormat.Version
    /// How the name blocks are compressed.
    var compression: SymbolCacheFormat.NameCompression { version.compression }

    /// Per name: its raw and readable names' numbers in the text table (-2: not added yet, -1: none).
    @exclusivity(unchecked) private var nameTexts: [(raw: Int32, readable: Int32)]
    /// Per file: its number in the text table (-2: not added yet).
    @exclusivity(unchecked) private var fileTexts: [Int32]
    /// Inflated name blocks (nil: not yet), and per name where its full and raw strings start in its block.
    @exclusivity(unchecked) private var inflated: [UnsafeMutablePointer<UInt8>?]
    @exclusivity(unchecked) private var nameStrings: [(readable: Int32, raw: Int32)]
    /// The chain of the row being decoded, outermost frame first.
    @exclusivity(unchecked) private var chain: [Frame] = []

    private struct Frame {
        var name: Int32 = -1
        var file: Int32 = -1
        var line: UInt32 = 0
        var column: UInt32 = 0
        var isInlined = false
        var symbolOffset: UInt64?
    }

    /// Maps and checks the cache at `path`. `zstdLoadError` says why libzstd cannot be loaded (nil: it can); it
    /// is asked only for a cache of zstd names (versions 2 and 3), which is refused then. A cache of zlib names
    /// (versions 1 and 4) does not load libzstd.
    /// - Throws: ``SymbolsError/badSymbolCache(path:reason:)`` (or the opening's errors).
    init(path: String, zstdLoadError: () -> String? = { SymbolCacheReader.zstdLoadError }) throws(SymbolsError) {
        let file = try RegularFile(path: path)
        guard file.size >= UInt64(SymbolCacheFormat.headerSize), file.size <= UInt64(Int.max) else {
            throw .badSymbolCache(path: path, reason: "shorter than its header")
        }
        let size = Int(file.size)
        guard let mapped = mmap(nil, size, PROT_READ, MAP_PRIVATE, file.descriptor, 0), mapped != MAP_FAILED else {
            throw .cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        let base = UnsafeRawPointer(mapped)
        do {
            let layout = try Layout(base: base, size: size, path: path, zstdLoadError: zstdLoadError)
            self.path = path
            self.base = base
            self.size = size
            buildId = Array(UnsafeRawBufferPointer(start: base + layout.buildId.offset, count: layout.buildId.length))
            sourceRoot =
                layout.sourceRoot.length > 0
                ? String(
                    decoding: UnsafeRawBufferPointer(
                        start: base + layout.sourceRoot.offset, count: layout.sourceRoot.length),
                    as: UTF8.self) : nil
            blockCount = layout.blockCount
            blockStarts = base + layout.blockStarts
            blockRowOffsets = base + layout.blockRowOffsets
            rows = (base + layout.rows.offset).assumingMemoryBound(to: UInt8.self)
            rowsLength = layout.rows.length
            fileCount = layout.fileCount
            fileOffsets = base + layout.fileOffsets
            fileStrings = (base + layout.fileStrings.offset).assumingMemoryBound(to: CChar.self)
            fileStringsLength = layout.fileStrings.length
            nameCount = layout.nameCount
            nameFlags = (base + layout.nameFlags).assumingMemoryBound(to: UInt8.self)
            nameBlockCount = layout.nameBlockCount
            nameBlockTable = base + layout.nameBlockTable
            namesData = (base + layout.namesData.offset).assumingMemoryBound(to: UInt8.self)
            namesDataLength = layout.namesData.length
            namesPerBlock = layout.namesPerBlock
            version = layout.version
        } catch {
            munmap(mapped, size)
            throw error
        }
        nameTexts = Array(repeating: (-2, -2), count: nameCount)
        fileTexts = Array(repeating: -2, count: fileCount)
        inflated = Array(repeating: nil, count: nameBlockCount)
        nameStrings = Array(repeating: (-1, -1), count: nameCount)
    }

    deinit {
        for block in inflated { block?.deallocate() }
        munmap(UnsafeMutableRawPointer(mutating: base), size)
    }

    /// The header's tables, each checked to lie inside the file.
    private struct Layout {
        var buildId: (offset: Int, length: Int)
        var sourceRoot: (offset: Int, length: Int)
        var blockCount: Int
        var blockStarts: Int
        var blockRowOffsets: Int
        var rows: (offset: Int, length: Int)
        var fileCount: Int
        var fileOffsets: Int
        var fileStrings: (offset: Int, length: Int)
        var nameCount: Int
        var nameFlags: Int
        var nameBlockCount: Int
        var nameBlockTable: Int
        var namesData: (offset: Int, length: Int)
        var namesPerBlock: Int
        var version: SymbolCacheFormat.Version

        init(base: UnsafeRawPointer, size: Int, path: String, zstdLoadError: () -> String?) throws(SymbolsError) {
            typealias Field = SymbolCacheFormat.Field
            func bad(_ reason: String) -> SymbolsError { .badSymbolCache(path: path, reason: reason) }
            guard
                UnsafeRawBufferPointer(start: base, count: SymbolCacheFormat.magic.count).elementsEqual(
                    SymbolCacheFormat.magic)
            else { throw bad("not a symbol cache: no CLYSYMC magic") }
            let version = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            guard let known = SymbolCacheFormat.Version(rawValue: version) else {
                throw bad(
                    "format version \(version), this reader reads 1 to \(SymbolCacheFormat.Version.allCases.count)")
            }
            if known.compression == .zstd, let zstdLoadError = zstdLoadError() {
                throw bad(
                    "format version \(version), its names zstd-compressed, and \(zstdLoadError); install libzstd"
                        + " (Debian, Ubuntu: libzstd1), or make the cache on this machine: without libzstd it is"
                        + " written with zlib (version \(SymbolCacheFormat.Version.zlib.rawValue))")
            }
            self.version = known
            let headerSize = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
            guard headerSize == UInt32(SymbolCacheFormat.headerSize) else { throw bad("header size \(headerSize)") }
            func field(_ field: Field) -> UInt64 {
                UInt64(
                    littleEndian: base.loadUnaligned(
                        fromByteOffset: SymbolCacheFormat.prefixSize + field.rawValue * 8, as: UInt64.self))
            }
            /// A table of `count` entries of `entrySize` bytes at the field's offset, inside the file.
            func table(_ offset: Field, count: UInt64, entrySize: UInt64, _ what: String) throws(SymbolsError) -> Int {
                let start = field(offset)
                let (length, overflow) = count.multipliedReportingOverflow(by: entrySize)
                guard !overflow, start >= UInt64(SymbolCacheFormat.headerSize), start <= UInt64(size),
                    length <= UInt64(size) - start
                else { throw bad("\(what) outside the file") }
                return Int(start)
            }
            func count(_ counted: Field, _ what: String) throws(SymbolsError) -> Int {
                let value = field(counted)
                guard value <= UInt64(size) else { throw bad("\(what) count \(value) exceeds the file") }
                return Int(value)
            }
            func region(_ offset: Field, _ length: Field, _ what: String) throws(SymbolsError) -> (Int, Int) {
                let bytes = try count(length, what)
                return (try table(offset, count: UInt64(bytes), entrySize: 1, what), bytes)
            }
            buildId = try region(.buildIdOffset, .buildIdLength, "build id")
            guard buildId.length > 0 else { throw bad("no build id") }
            sourceRoot =
                field(.sourceRootLength) == 0 ? (0, 0) : try region(.sourceRootOffset, .sourceRootLength, "source root")
            blockCount = try count(.blockCount, "block")
            blockStarts = try table(.blockStartsOffset, count: UInt64(blockCount), entrySize: 8, "block starts")
            blockRowOffsets = try table(
                .blockRowOffsetsOffset, count: UInt64(blockCount) + 1, entrySize: 4, "block row offsets")
            rows = try region(.rowsOffset, .rowsLength, "rows")
            fileCount = try count(.fileCount, "file")
            fileOffsets = try table(.fileOffsetsOffset, count: UInt64(fileCount), entrySize: 4, "file offsets")
            fileStrings = try region(.fileStringsOffset, .fileStringsLength, "file names")
            if fileCount > 0 {
                guard fileStrings.length > 0,
                    base.load(fromByteOffset: fileStrings.offset + fileStrings.length - 1, as: UInt8.self) == 0
                else { throw bad("file names not NUL-terminated") }
            }
            nameCount = try count(.nameCount, "name")
            nameFlags = try table(.nameFlagsOffset, count: UInt64(nameCount), entrySize: 1, "name flags")
            nameBlockCount = try count(.nameBlockCount, "name block")
            nameBlockTable = try table(
                .nameBlockTableOffset, count: UInt64(nameBlockCount),
                entrySize: UInt64(SymbolCacheFormat.nameBlockEntrySize), "name blocks")
            namesData = try region(.namesDataOffset, .namesDataLength, "names")
            let perBlock = field(.namesPerBlock)
            guard perBlock > 0, perBlock <= 1 << 16 else { throw bad("\(perBlock) names per block") }
            namesPerBlock = Int(perBlock)
            guard UInt64(nameBlockCount) * perBlock >= UInt64(nameCount) else { throw bad("too few name blocks") }
        }
    }

    /// Appends the frames of `address` (file-relative, already adjusted) to `frames`, innermost first, their
    /// names and paths added to `text`; nothing when the cache has no answer for it.
    func lookup(_ address: UInt64, into frames: inout [FrameRecord], text: TextTable) {
        // The last block starting at or before the address.
        var low = 0
        var high = blockCount
        while low < high {
            let middle = (low + high) / 2
            if blockStart(middle) <= address { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return }
        let block = low - 1
        let from = Int(rowOffset(block))
        let to = Int(rowOffset(block + 1))
        guard from <= to, to <= rowsLength else { return }
        var cursor = SymbolCacheCursor(start: rows + from, end: rows + to)
        var start = blockStart(block)
        let count = cursor.uleb(below: UInt64(SymbolCacheFormat.rowsPerBlock) + 1)
        chain.removeAll(keepingCapacity: true)
        for _ in 0..<count {
            let length = cursor.uleb()
            guard decodeRow(&cursor), !cursor.failed else { return }
            let (end, overflow) = start.addingReportingOverflow(length)
            if address < end || overflow {
                guard address >= start else { return }
                append(address - start, into: &frames, text: text)
                return
            }
            start = end
        }
    }

    /// The start addresses of the first `limit` blocks (the fuzz target's addresses to look up).
    func blockStartAddresses(limit: Int) -> [UInt64] {
        (0..<min(max(0, limit), blockCount)).map(blockStart)
    }

    private func blockStart(_ index: Int) -> UInt64 {
        UInt64(littleEndian: blockStarts.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self))
    }

    private func rowOffset(_ index: Int) -> UInt32 {
        UInt32(littleEndian: blockRowOffsets.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
    }

    /// Decodes one row's chain into `chain` (the row before's, carried on); false when the row is corrupt.
    private func decodeRow(_ cursor: inout SymbolCacheCursor) -> Bool {
        let kept = Int(cursor.uleb(below: UInt64(chain.count) + 1))
        let added = Int(cursor.uleb(below: UInt64(SymbolCacheFormat.maximumChainDepth)))
        guard !cursor.failed, kept + added <= SymbolCacheFormat.maximumChainDepth else { return false }
        let names = UInt64(min(nameCount, Int(Int32.max)))
        let files = UInt64(min(fileCount, Int(Int32.max)))
        // In place: the frame at each depth is read (as the reference) before it is replaced.
        for depth in kept..<kept + added {
            let reference = depth < chain.count ? chain[depth] : Frame()
            let flags = SymbolCacheFormat.FrameFlags(rawValue: cursor.byte())
            var frame = Frame()
            if flags.contains(.hasName) {
                frame.name =
                    flags.contains(.sameName)
                    ? reference.name : Int32(truncatingIfNeeded: cursor.uleb(below: names))
            }
            if flags.contains(.hasFile) {
                frame.file =
                    flags.contains(.sameFile)
                    ? reference.file : Int32(truncatingIfNeeded: cursor.uleb(below: files))
            }
            let line = Int64(reference.line).addingReportingOverflow(cursor.sleb())
            guard !line.overflow, line.partialValue >= 0, line.partialValue <= Int64(UInt32.max) else { return false }
            frame.line = UInt32(line.partialValue)
            let column = cursor.uleb()
            guard column <= UInt64(UInt32.max) else { return false }
            frame.column = UInt32(column)
            frame.isInlined = flags.contains(.inlined)
            if flags.contains(.symbolOffset) { frame.symbolOffset = cursor.uleb() }
            if cursor.failed || (frame.name < 0 && flags.contains(.hasName))
                || (frame.file < 0 && flags.contains(.hasFile))
            {
                return false
            }
            if depth < chain.count { chain[depth] = frame } else { chain.append(frame) }
        }
        if chain.count > kept + added { chain.removeSubrange((kept + added)...) }
        return true
    }

    /// Appends the decoded chain, innermost first, `distance` bytes into its row.
    private func append(_ distance: UInt64, into frames: inout [FrameRecord], text: TextTable) {
        for frame in chain.reversed() {
            let names = frame.name >= 0 ? self.names(Int(frame.name), text) : (raw: -1, readable: -1)
            frames.append(
                FrameRecord(
                    function: names.readable, rawFunction: names.raw,
                    file: frame.file >= 0 ? file(Int(frame.file), text) : -1, line: frame.line, column: frame.column,
                    isInlined: frame.isInlined, symbolOffset: frame.symbolOffset.map { $0 &+ distance }))
        }
    }

    /// The text numbers of name `index`'s raw and readable forms, added on first use.
    private func names(_ index: Int, _ text: TextTable) -> (raw: Int32, readable: Int32) {
        let known = nameTexts[index]
        if known.raw != -2 { return known }
        var made: (raw: Int32, readable: Int32) = (-1, -1)
        if let strings = strings(of: index) {
            if strings.raw.pointee != 0 { made.raw = text.add(mapped: strings.raw) }
            if strings.readable.pointee != 0 { made.readable = text.add(mapped: strings.readable) }
        }
        nameTexts[index] = made
        return made
    }

    private func file(_ index: Int, _ text: TextTable) -> Int32 {
        let known = fileTexts[index]
        if known != -2 { return known }
        let offset = Int(UInt32(littleEndian: fileOffsets.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
        let number = offset < fileStringsLength ? text.add(mapped: fileStrings + offset) : -1
        fileTexts[index] = number
        return number
    }

    /// Name `index`'s readable and raw forms, NUL-terminated in its inflated block (nil when the block cannot be
    /// inflated).
    func strings(of index: Int) -> (readable: UnsafePointer<CChar>, raw: UnsafePointer<CChar>)? {
        guard index >= 0, index < nameCount else { return nil }
        let block = index / namesPerBlock
        guard let bytes = inflate(block) else { return nil }
        let found = nameStrings[index]
        let chars = UnsafeRawPointer(bytes).assumingMemoryBound(to: CChar.self)
        return (chars + Int(found.readable), chars + Int(found.raw))
    }

    /// Name `index`'s kind (see ``SymbolCacheFormat/NameFlags``).
    func flags(of index: Int) -> SymbolCacheFormat.NameFlags {
        guard index >= 0, index < nameCount else { return [] }
        return SymbolCacheFormat.NameFlags(rawValue: nameFlags[index])
    }

    /// Why libzstd cannot be loaded here, or nil when it can.
    static var zstdLoadError: String? { cly_zstd_load_error().map { String(cString: $0) } }

    /// Name block `block` inflated (once; kept), its names' string starts filled in; nil when it is corrupt.
    private func inflate(_ block: Int) -> UnsafeMutablePointer<UInt8>? {
        if let done = inflated[block] { return done }
        let entry = block * SymbolCacheFormat.nameBlockEntrySize
        let offset = UInt64(littleEndian: nameBlockTable.loadUnaligned(fromByteOffset: entry, as: UInt64.self))
        let compressed = Int(
            UInt32(littleEndian: nameBlockTable.loadUnaligned(fromByteOffset: entry + 8, as: UInt32.self)))
        let plain = Int(UInt32(littleEndian: nameBlockTable.loadUnaligned(fromByteOffset: entry + 12, as: UInt32.self)))
        guard offset <= UInt64(namesDataLength), compressed <= namesDataLength - Int(offset),
            plain <= SymbolCacheFormat.maximumNameBlockSize
        else { return nil }
        // One byte more than the block, always NUL: the last string ends inside the buffer whatever the file says.
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: plain + 1)
        let source = namesData + Int(offset)
        let unpacked =
            switch compression {
            case .zlib: Self.inflateBlock(source, compressed, into: buffer, plain)
            case .zstd: Self.decompressBlock(source, compressed, into: buffer, plain)
            }
        guard unpacked else {
            buffer.deallocate()
            return nil
        }
        buffer[plain] = 0
        // Each name: two or three NUL-terminated strings (a simplified form, in versions 1 and 2, is skipped);
        // missing ones (a short block) point at the final NUL.
        var position = 0
        let names = block * namesPerBlock..<min(nameCount, (block + 1) * namesPerBlock)
        func next() -> Int32 {
            let start = position
            position += strlen(UnsafeRawPointer(buffer + position).assumingMemoryBound(to: CChar.self))
            if position < plain { position += 1 }
            return Int32(truncatingIfNeeded: start)
        }
        let skipped = version.stringsPerName - 2
        for index in names {
            let readable = next()
            nameStrings[index] = (readable, next())
            for _ in 0..<skipped { _ = next() }
        }
        inflated[block] = buffer
        return buffer
    }

    /// Decompresses the zstd frame of `length` bytes at `source` into exactly `plain` bytes at `target` (with this
    /// thread's zstd context: a lookup decompresses a whole block per name it prints). False when it is no such
    /// frame or does not decompress to `plain` bytes.
    private static func decompressBlock(
        _ source: UnsafePointer<UInt8>, _ length: Int, into target: UnsafeMutablePointer<UInt8>, _ plain: Int
    ) -> Bool {
        var error: UnsafePointer<CChar>?
        let made = cly_zstd_decompress_reusing(target, plain, source, length, &error)
        return error == nil && made == plain
    }

    /// Inflates the zlib stream (RFC 1950) of `length` bytes at `source` into exactly `plain` bytes at `target`:
    /// its 2-byte header checked and skipped, the deflate data inflated raw (its Adler-32 trailer is not
    /// recomputed: a lookup inflates a whole block per name it prints, and the checksum was a third of that).
    /// False when it is no such stream or does not inflate to `plain` bytes.
    private static func inflateBlock(
        _ source: UnsafePointer<UInt8>, _ length: Int, into target: UnsafeMutablePointer<UInt8>, _ plain: Int
    ) -> Bool {
        guard length >= 2, source[0] & 0x0F == 8, source[0] >> 4 <= 7, source[1] & 0x20 == 0,
            (UInt32(source[0]) << 8 | UInt32(source[1])) % 31 == 0,
            let input = UInt32(exactly: length - 2), let output = UInt32(exactly: plain)
        else { return false }
        var stream = z_stream()
        guard cly_inflate_init_raw(&stream) == Z_OK else { return false }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: source + 2)
        stream.avail_in = input
        stream.next_out = target
        stream.avail_out = output
        let status = CZlib.inflate(&stream, Z_FINISH)
        return status == Z_STREAM_END && stream.total_out == uLong(plain)
    }
}
