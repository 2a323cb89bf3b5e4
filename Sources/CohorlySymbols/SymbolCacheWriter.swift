/// Makes a symbol cache (``SymbolCacheFormat``) of a module: the answers of its ``ModuleSymbolicator``, asked
/// once per stretch of addresses where they cannot change (between two neighbouring line rows, scope bounds,
/// unit bounds or symbol bounds), so that the cache answers every address exactly as the symbolicator does.
public enum SymbolCacheWriter {
    /// The cache of `symbolicator`'s module, keyed by `buildId` (the code file's GNU build id).
    /// - Throws: ``SymbolsError/badSymbolCache(path:reason:)`` when the module has no build id to key it by.
    public static func make(_ symbolicator: ModuleSymbolicator, buildId: [UInt8]?) throws(SymbolsError) -> [UInt8] {
        try make(symbolicator, buildId: buildId, compression: SymbolCacheNames.availableCompression)
    }

    /// The cache of `symbolicator`'s module with its names compressed by `compression` (format version 3 for
    /// zstd, 4 for zlib).
    static func make(
        _ symbolicator: ModuleSymbolicator, buildId: [UInt8]?, compression: SymbolCacheFormat.NameCompression
    ) throws(SymbolsError) -> [UInt8] {
        guard let buildId, !buildId.isEmpty else {
            throw .badSymbolCache(
                path: symbolicator.debugFile.path, reason: "the file has no GNU build id to key a symbol cache by")
        }
        var builder = Builder(names: SymbolCacheNames.Maker(compression: compression))
        let bounds = symbolicator.answerBoundaries()
        // The names stay linkage names while the rows are made: the name blocks' threads demangle them, and this
        // thread never waits for a name.
        let text = symbolicator.text
        text.keepsNamesMangled = true
        defer { text.keepsNamesMangled = false }
        var records: [FrameRecord] = []
        for (position, address) in bounds.enumerated() {
            records.removeAll(keepingCapacity: true)
            _ = symbolicator.records(for: address, isReturnAddress: false, into: &records)
            let next = position + 1 < bounds.count ? bounds[position + 1] : address &+ 1
            builder.add(address, length: next &- address, frames: records[...], text: text)
        }
        builder.closeBlock()
        return builder.bytes(buildId: buildId, sourceRoot: symbolicator.sourceRoot)
    }

    /// The cache of the module `codeFile`, from its own DWARF or the debug file `locator` finds for its build id
    /// (as ``ModuleSymbolicator/open(codeFile:buildId:locator:)`` opens it), keyed by its build id.
    public static func make(codeFile: String, locator: DebugFileLocator) throws(SymbolsError) -> [UInt8] {
        let buildId = try ObjectInfo(path: codeFile).buildId
        let symbolicator = try ModuleSymbolicator.open(codeFile: codeFile, buildId: buildId, locator: locator)
        return try make(symbolicator, buildId: buildId)
    }

    /// One frame of a row, as the cache numbers it.
    private struct Frame: Equatable {
        var name: Int32
        var file: Int32
        var line: UInt32
        var column: UInt32
        var isInlined: Bool
        var symbolOffset: UInt64?

        /// The reference frame at a depth the row before has not: no name, no file, line 0.
        static let none = Frame(name: -1, file: -1, line: 0, column: 0, isInlined: false)
    }

    /// A row: a stretch of addresses with one answer (its frames, outermost first, in the block's frames).
    private struct Row {
        var start: UInt64
        var length: UInt64
        var frames: Range<Int>
    }

    private struct Builder {
        var blockStarts: [UInt64] = []
        var blockRowOffsets: [UInt32] = []
        var rows: [UInt8] = []
        /// The rows of the block in the making, their frames one after another in `blockFrames`, and the chain
        /// of the stretch being added: no array per row (swift-format has about a million).
        var block: [Row] = []
        var blockFrames: [Frame] = []
        var chain: [Frame] = []
        /// Names by the number of their raw form in the symbolicator's text (-1: not numbered yet), and those
        /// with a readable form only by its number.
        var nameNumbers: [Int32] = []
        var readableOnlyNumbers: [Int32: Int32] = [:]
        /// Makes the name blocks on other threads while the rows are built.
        var names: SymbolCacheNames.Maker
        /// Files by their number in the symbolicator's text (-1: not numbered yet).
        var fileNumbers: [Int32] = []
        var files: [[UInt8]] = []

        init(names: SymbolCacheNames.Maker) { self.names = names }

        mutating func add(_ address: UInt64, length: UInt64, frames: ArraySlice<FrameRecord>, text: TextTable) {
            guard !frames.isEmpty else {
                closeBlock()
                return
            }
            chain.removeAll(keepingCapacity: true)
            for record in frames.reversed() {
                chain.append(
                    Frame(
                        name: name(record, text), file: file(record.file, text), line: record.line,
                        column: record.column, isInlined: record.isInlined, symbolOffset: record.symbolOffset))
            }
            if let last = block.last, last.start &+ last.length == address, continues(last) {
                block[block.count - 1].length &+= length
                return
            }
            if let last = block.last, last.start &+ last.length != address { closeBlock() }
            if block.count == SymbolCacheFormat.rowsPerBlock { closeBlock() }
            let first = blockFrames.count
            blockFrames += chain
            block.append(Row(start: address, length: length, frames: first..<blockFrames.count))
        }

        /// Whether `chain` is `row`'s answer carried on (a symbol's offset grown by the row's length).
        func continues(_ row: Row) -> Bool {
            guard row.frames.count == chain.count else { return false }
            for (before, now) in zip(blockFrames[row.frames], chain) {
                var expected = before
                if let offset = before.symbolOffset { expected.symbolOffset = offset &+ row.length }
                if expected != now { return false }
            }
            return true
        }

        /// The cache's number of a frame's name, numbering it when it is new. A name with a raw (linkage) form
        /// is handed over as that, to be demangled with its block (the symbolicator keeps names mangled while the
        /// cache is made: its readable form is the raw one demangled, as the symbolicator makes it otherwise).
        mutating func name(_ record: FrameRecord, _ text: TextTable) -> Int32 {
            let number = Int32(truncatingIfNeeded: names.count)
            guard record.rawFunction >= 0 else {
                guard record.function >= 0 else { return -1 }
                if let known = readableOnlyNumbers[record.function] { return known }
                text.withView {
                    names.add(readable: $0[record.function], raw: UnsafeBufferPointer(start: nil, count: 0))
                }
                readableOnlyNumbers[record.function] = number
                return number
            }
            let raw = Int(record.rawFunction)
            if raw < nameNumbers.count, nameNumbers[raw] >= 0 { return nameNumbers[raw] }
            text.withView { names.add(readable: nil, raw: $0[record.rawFunction]) }
            Self.set(&nameNumbers, raw, number)
            return number
        }

        mutating func file(_ number: Int32, _ text: TextTable) -> Int32 {
            guard number >= 0 else { return -1 }
            if Int(number) < fileNumbers.count, fileNumbers[Int(number)] >= 0 { return fileNumbers[Int(number)] }
            let made = Int32(files.count)
            text.withView { files.append(Array($0[number])) }
            Self.set(&fileNumbers, Int(number), made)
            return made
        }

        /// Sets `table[index]`, growing the table (with -1) when it is shorter.
        private static func set(_ table: inout [Int32], _ index: Int, _ value: Int32) {
            if index >= table.count {
                table.append(contentsOf: repeatElement(-1, count: max(index + 1, 2 * table.count) - table.count))
            }
            table[index] = value
        }

        /// Encodes the rows of the block in the making (see ``SymbolCacheFormat``) and starts the next.
        mutating func closeBlock() {
            guard let first = block.first else { return }
            blockStarts.append(first.start)
            blockRowOffsets.append(UInt32(truncatingIfNeeded: rows.count))
            rows.appendULEB(UInt64(block.count))
            var previous = 0..<0
            for row in block {
                rows.appendULEB(row.length)
                let count = row.frames.count
                var kept = 0
                while kept < previous.count && kept < count
                    && blockFrames[previous.lowerBound + kept] == blockFrames[row.frames.lowerBound + kept]
                    && blockFrames[row.frames.lowerBound + kept].symbolOffset == nil
                {
                    kept += 1
                }
                rows.appendULEB(UInt64(kept))
                rows.appendULEB(UInt64(count - kept))
                for depth in kept..<count {
                    let frame = blockFrames[row.frames.lowerBound + depth]
                    let reference = depth < previous.count ? blockFrames[previous.lowerBound + depth] : .none
                    var flags: SymbolCacheFormat.FrameFlags = []
                    if frame.name >= 0 {
                        flags.insert(frame.name == reference.name ? [.hasName, .sameName] : .hasName)
                    }
                    if frame.file >= 0 {
                        flags.insert(frame.file == reference.file ? [.hasFile, .sameFile] : .hasFile)
                    }
                    if frame.isInlined { flags.insert(.inlined) }
                    if frame.symbolOffset != nil { flags.insert(.symbolOffset) }
                    rows.append(flags.rawValue)
                    if flags.contains(.hasName) && !flags.contains(.sameName) { rows.appendULEB(UInt64(frame.name)) }
                    if flags.contains(.hasFile) && !flags.contains(.sameFile) { rows.appendULEB(UInt64(frame.file)) }
                    rows.appendSLEB(Int64(frame.line) - Int64(reference.line))
                    rows.appendULEB(UInt64(frame.column))
                    if let offset = frame.symbolOffset { rows.appendULEB(offset) }
                }
                previous = row.frames
            }
            block.removeAll(keepingCapacity: true)
            blockFrames.removeAll(keepingCapacity: true)
        }

        /// The whole file.
        mutating func bytes(buildId: [UInt8], sourceRoot: String?) -> [UInt8] {
            typealias Field = SymbolCacheFormat.Field
            let names = self.names.finish()
            var fields = [UInt64](repeating: 0, count: Field.allCases.count)
            // One buffer, the header's room first: each table is copied once, into place.
            var file = [UInt8](repeating: 0, count: SymbolCacheFormat.headerSize)
            file.reserveCapacity(
                SymbolCacheFormat.headerSize + buildId.count + 12 * blockStarts.count + rows.count
                    + names.blockTable.count + names.data.count + names.flags.count + 4 * files.count
                    + files.reduce(0) { $0 + $1.count + 1 } + (sourceRoot?.utf8.count ?? 0) + 8 * 12)
            func align() {
                while file.count % 8 != 0 { file.append(0) }
            }
            func place(_ bytes: [UInt8], _ offset: Field, _ length: Field? = nil) {
                align()
                fields[offset.rawValue] = UInt64(file.count)
                if let length { fields[length.rawValue] = UInt64(bytes.count) }
                file += bytes
            }
            place(buildId, .buildIdOffset, .buildIdLength)
            if let sourceRoot { place(Array(sourceRoot.utf8), .sourceRootOffset, .sourceRootLength) }

            fields[Field.blockCount.rawValue] = UInt64(blockStarts.count)
            align()
            fields[Field.blockStartsOffset.rawValue] = UInt64(file.count)
            for start in blockStarts { file.appendLittleEndian(start) }
            align()
            fields[Field.blockRowOffsetsOffset.rawValue] = UInt64(file.count)
            for offset in blockRowOffsets { file.appendLittleEndian(offset) }
            file.appendLittleEndian(UInt32(truncatingIfNeeded: rows.count))
            place(rows, .rowsOffset, .rowsLength)

            fields[Field.fileCount.rawValue] = UInt64(files.count)
            align()
            fields[Field.fileOffsetsOffset.rawValue] = UInt64(file.count)
            var stringsLength = 0
            for path in files {
                file.appendLittleEndian(UInt32(truncatingIfNeeded: stringsLength))
                stringsLength += path.count + 1
            }
            align()
            fields[Field.fileStringsOffset.rawValue] = UInt64(file.count)
            fields[Field.fileStringsLength.rawValue] = UInt64(stringsLength)
            for path in files {
                file += path
                file.append(0)
            }

            fields[Field.nameCount.rawValue] = UInt64(names.flags.count)
            place(names.flags, .nameFlagsOffset)
            fields[Field.nameBlockCount.rawValue] = UInt64(
                names.blockTable.count / SymbolCacheFormat.nameBlockEntrySize)
            fields[Field.namesPerBlock.rawValue] = UInt64(SymbolCacheFormat.namesPerBlock)
            place(names.blockTable, .nameBlockTableOffset)
            place(names.data, .namesDataOffset, .namesDataLength)

            var header = SymbolCacheFormat.magic
            header.appendLittleEndian(SymbolCacheFormat.Version(writtenWith: self.names.compression).rawValue)
            header.appendLittleEndian(UInt32(SymbolCacheFormat.headerSize))
            for field in fields { header.appendLittleEndian(field) }
            file.replaceSubrange(0..<header.count, with: header)
            return file
        }
    }
}
