import Dispatch
import Synchronization

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
    /// zstd, 4 for zlib); `mostActiveSpans` as ``DwarfIndex/AnswerBoundWalk/mostActiveSpans`` (tests lower it).
    ///
    /// Three kinds of work overlap: this thread looks each stretch up, a thread of its own turns the answers
    /// into rows (``RowMaker``), and libdispatch's threads make the name blocks. The names stay linkage names
    /// while the rows are made (``TextTable/keepsNamesMangled``): the name blocks' threads demangle them, and no
    /// thread waits for a name.
    static func make(
        _ symbolicator: ModuleSymbolicator, buildId: [UInt8]?, compression: SymbolCacheFormat.NameCompression,
        mostActiveSpans: Int = 64
    ) throws(SymbolsError) -> [UInt8] {
        guard let buildId, !buildId.isEmpty else {
            throw .badSymbolCache(
                path: symbolicator.debugFile.path, reason: "the file has no GNU build id to key a symbol cache by")
        }
        let rows = RowMaker(builder: Builder(names: SymbolCacheNames.Maker(compression: compression)))
        let text = symbolicator.text
        text.keepsNamesMangled = true
        defer { text.keepsNamesMangled = false }
        var lookups = Lookups()
        var walk = symbolicator.answerBoundWalk(mostActiveSpans: mostActiveSpans)
        // Each stretch runs to the next bound; the last one is a single byte.
        var bound = walk.next()
        while let start = bound {
            bound = walk.next()
            lookups.lookUp(start, length: bound.map { $0 &- start } ?? 1, in: symbolicator, rows: rows)
        }
        rows.take(lookups.stretches)
        // Never nil: only the row maker's `add` takes the builder out, and it puts it back.
        guard var builder = rows.finish() else {
            throw .badSymbolCache(path: symbolicator.debugFile.path, reason: "the rows were not made")
        }
        builder.closeBlock()
        return builder.bytes(buildId: buildId, sourceRoot: symbolicator.sourceRoot)
    }

    /// The looking-up thread's side: stretches looked up and not handed over yet, and which texts were.
    private struct Lookups {
        var stretches = Stretches()
        /// Per text number: whether its bytes went to the row maker with an earlier stretch.
        var handedOver: [Bool] = []

        /// Looks the stretch of `length` bytes at `address` up, handing the stretches to `rows` when they are
        /// enough.
        mutating func lookUp(_ address: UInt64, length: UInt64, in symbolicator: ModuleSymbolicator, rows: RowMaker) {
            let first = stretches.frames.count
            _ = symbolicator.records(for: address, isReturnAddress: false, into: &stretches.frames)
            for index in first..<stretches.frames.count {
                let frame = stretches.frames[index]
                handOver(frame.rawFunction >= 0 ? frame.rawFunction : frame.function, symbolicator.text)
                handOver(frame.file, symbolicator.text)
            }
            stretches.ends.append((address, length, stretches.frames.count))
            if stretches.ends.count == Stretches.capacity {
                rows.take(stretches)
                stretches = rows.emptyStretches()
            }
        }

        /// Adds text `number`'s bytes to the stretches when they are the first to name it.
        private mutating func handOver(_ number: Int32, _ text: TextTable) {
            guard number >= 0 else { return }
            if Int(number) >= handedOver.count {
                handedOver.append(
                    contentsOf: repeatElement(
                        false, count: max(Int(number) + 1, 2 * handedOver.count) - handedOver.count))
            }
            if !handedOver[Int(number)] {
                handedOver[Int(number)] = true
                stretches.texts.append((number, text.stableBytes(number)))
            }
        }
    }

    /// The cache of the module `codeFile`, from its own DWARF or the debug file `locator` finds for its build id
    /// (as ``ModuleSymbolicator/open(codeFile:buildId:locator:)`` opens it), keyed by its build id.
    public static func make(codeFile: String, locator: DebugFileLocator) throws(SymbolsError) -> [UInt8] {
        let buildId = try ObjectInfo(path: codeFile).buildId
        let symbolicator = try ModuleSymbolicator.open(codeFile: codeFile, buildId: buildId, locator: locator)
        return try make(symbolicator, buildId: buildId)
    }

    /// Consecutive stretches looked up, handed to the row maker together: each one's start, length and where its
    /// frames end in `frames`, and the bytes of the texts its frames name for the first time. The bytes stay
    /// where they are while the symbolicator lives (names in its mapped files, paths in its text table's kept
    /// blocks: ``TextTable/stableBytes(_:)``), and the writer waits for the row maker before it returns, hence
    /// `@unchecked Sendable`.
    private struct Stretches: @unchecked Sendable {
        /// Stretches per hand-over (about 0.5 MB of frames).
        static let capacity = 4096
        var ends: [(start: UInt64, length: UInt64, framesEnd: Int)] = []
        var frames: [FrameRecord] = []
        var texts: [(number: Int32, bytes: UnsafeBufferPointer<UInt8>)] = []

        init() {
            ends.reserveCapacity(Self.capacity)
            frames.reserveCapacity(3 * Self.capacity)
        }

        /// Empties the stretches, keeping their arrays' room.
        mutating func removeAll() {
            ends.removeAll(keepingCapacity: true)
            frames.removeAll(keepingCapacity: true)
            texts.removeAll(keepingCapacity: true)
        }
    }

    /// Turns stretches into rows on a thread of its own (a serial queue), in the order they are taken; at most
    /// ``inFlight`` hand-overs wait at once (the looking-up thread waits past that), so memory stays bounded
    /// when the rows fall behind, and their arrays come back for the next ones (``emptyStretches()``: no fresh
    /// memory to fault in per hand-over). The builder is touched only on the queue until ``finish()`` has
    /// waited for it, hence `@unchecked Sendable`.
    private final class RowMaker: @unchecked Sendable {
        /// The builder, out of this property while a hand-over is added (no access check per stretch).
        private var builder: Builder?
        private let queue = DispatchQueue(label: "cohorly.symbols.cache-rows")
        private let room = DispatchSemaphore(value: RowMaker.inFlight)
        private let spent = Mutex<[Stretches]>([])
        static let inFlight = 8

        init(builder: Builder) { self.builder = builder }

        func take(_ stretches: Stretches) {
            room.wait()
            queue.async { [self] in
                add(stretches)
                room.signal()
            }
        }

        /// Stretches to fill: the arrays of ones added, or new ones.
        func emptyStretches() -> Stretches {
            spent.withLock { $0.popLast() } ?? Stretches()
        }

        private func add(_ stretches: Stretches) {
            guard var building = builder else { return }
            builder = nil
            building.addTexts(stretches.texts)
            stretches.frames.withUnsafeBufferPointer { frames in
                var start = 0
                for end in stretches.ends {
                    building.add(
                        end.start, length: end.length,
                        frames: UnsafeBufferPointer(rebasing: frames[start..<end.framesEnd]))
                    start = end.framesEnd
                }
            }
            builder = building
            var emptied = stretches
            emptied.removeAll()
            spent.withLock { $0.append(emptied) }
        }

        /// The builder, once every stretch taken is in its rows.
        func finish() -> Builder? {
            queue.sync {}
            return builder
        }
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
        /// The bytes of the texts the frames name, by text number.
        var texts: [UnsafeBufferPointer<UInt8>] = []
        /// Where ``closeBlock()`` encodes a block.
        var encoded: [UInt8] = []

        init(names: SymbolCacheNames.Maker) { self.names = names }

        /// Keeps the bytes of texts named from now on.
        mutating func addTexts(_ named: [(number: Int32, bytes: UnsafeBufferPointer<UInt8>)]) {
            for (number, bytes) in named {
                if Int(number) >= texts.count {
                    texts.append(
                        contentsOf: repeatElement(
                            UnsafeBufferPointer(start: nil, count: 0),
                            count: max(Int(number) + 1, 2 * texts.count) - texts.count))
                }
                texts[Int(number)] = bytes
            }
        }

        /// Adds the stretch of `length` bytes at `address` whose frames (innermost first) are `frames`, their texts'
        /// bytes kept (``addTexts(_:)``).
        mutating func add(_ address: UInt64, length: UInt64, frames: UnsafeBufferPointer<FrameRecord>) {
            guard !frames.isEmpty else {
                closeBlock()
                return
            }
            chain.removeAll(keepingCapacity: true)
            for record in frames.reversed() {
                chain.append(
                    Frame(
                        name: name(record), file: file(record.file), line: record.line,
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
            var depth = 0
            for index in row.frames {
                var expected = blockFrames[index]
                if let offset = expected.symbolOffset { expected.symbolOffset = offset &+ row.length }
                if expected != chain[depth] { return false }
                depth += 1
            }
            return true
        }

        /// The cache's number of a frame's name, numbering it when it is new. A name with a raw (linkage) form
        /// is handed over as that, to be demangled with its block (the symbolicator keeps names mangled while the
        /// cache is made: its readable form is the raw one demangled, as the symbolicator makes it otherwise).
        mutating func name(_ record: FrameRecord) -> Int32 {
            let number = Int32(truncatingIfNeeded: names.count)
            guard record.rawFunction >= 0 else {
                guard record.function >= 0 else { return -1 }
                if let known = readableOnlyNumbers[record.function] { return known }
                names.add(readable: texts[Int(record.function)], raw: UnsafeBufferPointer(start: nil, count: 0))
                readableOnlyNumbers[record.function] = number
                return number
            }
            let raw = Int(record.rawFunction)
            if raw < nameNumbers.count, nameNumbers[raw] >= 0 { return nameNumbers[raw] }
            names.add(readable: nil, raw: texts[raw])
            Self.set(&nameNumbers, raw, number)
            return number
        }

        mutating func file(_ number: Int32) -> Int32 {
            guard number >= 0 else { return -1 }
            if Int(number) < fileNumbers.count, fileNumbers[Int(number)] >= 0 { return fileNumbers[Int(number)] }
            let made = Int32(files.count)
            files.append(Array(texts[Int(number)]))
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

        /// Encodes the rows of the block in the making (see ``SymbolCacheFormat``) and starts the next: into
        /// `encoded` (kept from block to block, with room for the block's longest encoding), then appended to
        /// `rows` at once.
        mutating func closeBlock() {
            guard let first = block.first else { return }
            blockStarts.append(first.start)
            blockRowOffsets.append(UInt32(truncatingIfNeeded: rows.count))
            let room = RowBytes.longestBlock(rows: block.count, frames: blockFrames.count)
            var encoded = self.encoded
            self.encoded = []
            if encoded.count < room { encoded = [UInt8](repeating: 0, count: max(room, 2 * encoded.count)) }
            let length = encoded.withUnsafeMutableBufferPointer { buffer in
                block.withUnsafeBufferPointer { block in
                    blockFrames.withUnsafeBufferPointer { frames in Self.encode(block, frames, into: buffer) }
                }
            }
            rows += encoded[..<length]
            self.encoded = encoded
            block.removeAll(keepingCapacity: true)
            blockFrames.removeAll(keepingCapacity: true)
        }

        /// Encodes `block`, its frames in `frames`, into `buffer` (room for ``RowBytes/longestBlock(rows:frames:)``
        /// bytes); returns the length.
        private static func encode(
            _ block: UnsafeBufferPointer<Row>, _ frames: UnsafeBufferPointer<Frame>,
            into buffer: UnsafeMutableBufferPointer<UInt8>
        ) -> Int {
            guard let base = buffer.baseAddress else { return 0 }
            var out = RowBytes(base: base)
            out.uleb(UInt64(block.count))
            var previous = 0..<0
            for row in block {
                out.uleb(row.length)
                let count = row.frames.count
                var kept = 0
                while kept < previous.count && kept < count
                    && frames[previous.lowerBound &+ kept] == frames[row.frames.lowerBound &+ kept]
                    && frames[row.frames.lowerBound &+ kept].symbolOffset == nil
                {
                    kept &+= 1
                }
                out.uleb(UInt64(kept))
                out.uleb(UInt64(count &- kept))
                for depth in kept..<count {
                    let frame = frames[row.frames.lowerBound &+ depth]
                    let reference = depth < previous.count ? frames[previous.lowerBound &+ depth] : .none
                    var flags: SymbolCacheFormat.FrameFlags = []
                    if frame.name >= 0 {
                        flags.insert(frame.name == reference.name ? [.hasName, .sameName] : .hasName)
                    }
                    if frame.file >= 0 {
                        flags.insert(frame.file == reference.file ? [.hasFile, .sameFile] : .hasFile)
                    }
                    if frame.isInlined { flags.insert(.inlined) }
                    if frame.symbolOffset != nil { flags.insert(.symbolOffset) }
                    out.byte(flags.rawValue)
                    if flags.contains(.hasName) && !flags.contains(.sameName) { out.uleb(UInt64(frame.name)) }
                    if flags.contains(.hasFile) && !flags.contains(.sameFile) { out.uleb(UInt64(frame.file)) }
                    out.sleb(Int64(frame.line) - Int64(reference.line))
                    out.uleb(UInt64(frame.column))
                    if let offset = frame.symbolOffset { out.uleb(offset) }
                }
                previous = row.frames
            }
            return out.count
        }

        /// The whole file.
        mutating func bytes(buildId: [UInt8], sourceRoot: String?) -> [UInt8] {
            typealias Field = SymbolCacheFormat.Field
            // The last names go to the lanes first: their blocks are made while the rows are copied.
            self.names.submitPending()
            var fields = [UInt64](repeating: 0, count: Field.allCases.count)
            // One buffer, the header's room first: each table is copied once, into place (the names' room
            // guessed: 32 bytes a name, where swift-format's take 31 with their flags and block table; too
            // little only costs a copy).
            var file = [UInt8](repeating: 0, count: SymbolCacheFormat.headerSize)
            file.reserveCapacity(
                SymbolCacheFormat.headerSize + buildId.count + 12 * blockStarts.count + rows.count
                    + 32 * self.names.count + 4 * files.count + files.reduce(0) { $0 + $1.count + 1 }
                    + (sourceRoot?.utf8.count ?? 0) + 8 * 12)
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

            let names = self.names.finish()
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

    /// Bytes written at a pointer with no check per byte: the room was made for ``longestBlock(rows:frames:)``.
    private struct RowBytes {
        let base: UnsafeMutablePointer<UInt8>
        var count = 0

        /// The most bytes a block of `rows` rows with `frames` frames in all encodes to: per value its longest
        /// LEB128 (10 bytes for 64 bits, 5 for 32).
        static func longestBlock(rows: Int, frames: Int) -> Int {
            10 + rows * (10 + 10 + 10) + frames * (1 + 5 + 5 + 10 + 5 + 10)
        }

        init(base: UnsafeMutablePointer<UInt8>) { self.base = base }

        mutating func byte(_ value: UInt8) {
            base[count] = value
            count &+= 1
        }

        mutating func uleb(_ value: UInt64) { LEB128.encode(value) { byte($0) } }

        mutating func sleb(_ value: Int64) { LEB128.encode(value) { byte($0) } }
    }
}
