import CZlib
import CohorlyCrashModel
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Makes a symbol cache (``SymbolCacheFormat``) of a module: the answers of its ``ModuleSymbolicator``, asked
/// once per stretch of addresses where they cannot change (between two neighbouring line rows, scope bounds,
/// unit bounds or symbol bounds), so that the cache answers every address exactly as the symbolicator does.
public enum SymbolCacheWriter {
    /// The cache of `symbolicator`'s module, keyed by `buildId` (the code file's GNU build id).
    /// - Throws: ``SymbolsError/badSymbolCache(path:reason:)`` when the module has no build id to key it by.
    public static func make(_ symbolicator: ModuleSymbolicator, buildId: [UInt8]?) throws(SymbolsError) -> [UInt8] {
        guard let buildId, !buildId.isEmpty else {
            throw .badSymbolCache(
                path: symbolicator.debugFile.path, reason: "the file has no GNU build id to key a symbol cache by")
        }
        var builder = Builder()
        let bounds = symbolicator.answerBoundaries()
        let batchSize = 4096
        var start = 0
        while start < bounds.count {
            let end = min(start + batchSize, bounds.count)
            let batch = symbolicator.records(for: Array(bounds[start..<end]))
            symbolicator.text.withView { text in
                for (offset, group) in batch.groups.enumerated() {
                    let position = start + offset
                    let next = position + 1 < bounds.count ? bounds[position + 1] : group.address &+ 1
                    builder.add(
                        group.address, length: next &- group.address,
                        frames: batch.records[group.frames], text: text)
                }
            }
            start = end
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
        /// Names by their numbers in the symbolicator's text (raw << 32 | readable).
        var nameNumbers: [Int64: Int32] = [:]
        /// Makes the name blocks on other threads while the rows are built.
        var names = SymbolCacheNames.Maker()
        var fileNumbers: [Int32: Int32] = [:]
        var files: [[UInt8]] = []

        mutating func add(
            _ address: UInt64, length: UInt64, frames: ArraySlice<FrameRecord>, text: TextTable.View
        ) {
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

        mutating func name(_ record: FrameRecord, _ text: TextTable.View) -> Int32 {
            guard record.function >= 0 || record.rawFunction >= 0 else { return -1 }
            let key = Int64(record.rawFunction) << 32 | Int64(UInt32(bitPattern: record.function))
            if let known = nameNumbers[key] { return known }
            let number = Int32(truncatingIfNeeded: names.count)
            names.add(
                readable: record.function >= 0 ? text[record.function] : UnsafeBufferPointer(start: nil, count: 0),
                raw: record.rawFunction >= 0 ? text[record.rawFunction] : UnsafeBufferPointer(start: nil, count: 0))
            nameNumbers[key] = number
            return number
        }

        mutating func file(_ number: Int32, _ text: TextTable.View) -> Int32 {
            guard number >= 0 else { return -1 }
            if let known = fileNumbers[number] { return known }
            let made = Int32(files.count)
            files.append(Array(text[number]))
            fileNumbers[number] = made
            return made
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
            header.appendLittleEndian(SymbolCacheFormat.version)
            header.appendLittleEndian(UInt32(SymbolCacheFormat.headerSize))
            for field in fields { header.appendLittleEndian(field) }
            file.replaceSubrange(0..<header.count, with: header)
            return file
        }
    }
}

/// The names part of a symbol cache: each name's flags, and the names (readable, raw, simplified) in compressed
/// blocks. Demangling the simplified forms and compressing are much of the writer's work, so each block is made
/// on libdispatch's global queue (a thread per core at most) as soon as its names are numbered, while the
/// writer's thread goes on with the rows.
enum SymbolCacheNames {
    /// A name as the writer numbers it: its readable and raw (linkage) forms, either possibly empty.
    struct Name: Sendable {
        var readable: [UInt8]
        var raw: [UInt8]
    }

    /// A block of names made: their flags, the block compressed, and its size inflated.
    struct Block: Sendable {
        var flags: [UInt8]
        var compressed: [UInt8]
        var plainSize: UInt32
    }

    /// Takes the names in order of their numbers and makes each block once it is full (the last one at
    /// ``finish()``). A full block waits in a list and a task on the global queue takes one waiting block; at
    /// ``finish()`` the caller makes the blocks still waiting itself and then waits only for those being made, so
    /// the cache is made even when no other thread is free (the collector makes caches on its request threads).
    struct Maker {
        /// How many names were added.
        private(set) var count = 0
        private var pending: [Name] = []
        private var submitted = 0
        private let work = NameWork()

        /// Adds the next name (copying its bytes: the symbolicator's text may change once the writer goes on).
        mutating func add(readable: UnsafeBufferPointer<UInt8>, raw: UnsafeBufferPointer<UInt8>) {
            pending.append(Name(readable: Array(readable), raw: Array(raw)))
            count += 1
            if pending.count == SymbolCacheFormat.namesPerBlock { submit() }
        }

        private mutating func submit() {
            work.append((count - 1) / SymbolCacheFormat.namesPerBlock, pending)
            submitted += 1
            pending = []
            pending.reserveCapacity(SymbolCacheFormat.namesPerBlock)
            let work = self.work
            DispatchQueue.global().async { work.makeOne() }
        }

        /// Every name's flags, the block table and the blocks' data, once every block is made.
        mutating func finish() -> (flags: [UInt8], blockTable: [UInt8], data: [UInt8]) {
            if !pending.isEmpty { submit() }
            while work.makeOne() {}
            for _ in 0..<submitted { work.made.wait() }
            return work.assemble()
        }
    }

    /// The blocks waiting to be made and those made, by number; `made` is signalled once per block made.
    private final class NameWork: Sendable {
        /// The blocks handed over, in order (a block's names are dropped when it is taken), the first not taken,
        /// and the blocks made.
        private let state = Mutex<(waiting: [(index: Int, names: [Name])], next: Int, blocks: [Block?])>(([], 0, []))
        let made = DispatchSemaphore(value: 0)

        func append(_ index: Int, _ names: [Name]) {
            state.withLock { $0.waiting.append((index, names)) }
        }

        /// Makes one waiting block (the first); false when none was waiting.
        @discardableResult func makeOne() -> Bool {
            let job: (index: Int, names: [Name])? = state.withLock { state in
                guard state.next < state.waiting.count else { return nil }
                let job = state.waiting[state.next]
                state.waiting[state.next].names = []
                state.next += 1
                return job
            }
            guard let job else { return false }
            let block = SymbolCacheNames.block(job.names)
            state.withLock { state in
                if state.blocks.count <= job.index {
                    state.blocks += repeatElement(nil, count: job.index + 1 - state.blocks.count)
                }
                state.blocks[job.index] = block
            }
            made.signal()
            return true
        }

        func assemble() -> (flags: [UInt8], blockTable: [UInt8], data: [UInt8]) {
            state.withLock { state in
                var flags: [UInt8] = []
                var table: [UInt8] = []
                var data: [UInt8] = []
                flags.reserveCapacity(state.blocks.count * SymbolCacheFormat.namesPerBlock)
                table.reserveCapacity(state.blocks.count * SymbolCacheFormat.nameBlockEntrySize)
                data.reserveCapacity(state.blocks.reduce(0) { $0 + ($1?.compressed.count ?? 0) })
                for block in state.blocks {
                    guard let block else { continue }  // every block is made before `finish` assembles them
                    flags += block.flags
                    table.appendLittleEndian(UInt64(data.count))
                    table.appendLittleEndian(UInt32(truncatingIfNeeded: block.compressed.count))
                    table.appendLittleEndian(block.plainSize)
                    data += block.compressed
                }
                return (flags, table, data)
            }
        }
    }

    /// zlib's fastest level: on swift-format's 26 MB of names it compresses in two thirds of level 6's time,
    /// to 4.2 MB against 3.6 MB (the cache stays well under the GSYM's size).
    static let level: Int32 = 1

    /// The block of `names`: each one's flags, and `full\0raw\0simplified\0` of each, compressed.
    static func block(_ names: [Name]) -> Block {
        var flags: [UInt8] = []
        flags.reserveCapacity(names.count)
        var plain: [UInt8] = []
        plain.reserveCapacity(names.reduce(0) { $0 + 2 * $1.readable.count + $1.raw.count + 3 })
        for name in names {
            let readable = String(decoding: name.readable, as: UTF8.self)
            let simplified =
                Demangler.name(
                    function: name.readable.isEmpty ? nil : readable,
                    rawFunction: name.raw.isEmpty ? nil : String(decoding: name.raw, as: UTF8.self),
                    style: .simplified) ?? ""
            var kind: SymbolCacheFormat.NameFlags = []
            if isCompilerMade(name.readable, readable) { kind.insert(.compilerMade) }
            if readable.hasPrefix("Swift runtime failure: ") { kind.insert(.runtimeFailure) }
            flags.append(kind.rawValue)
            plain += name.readable
            plain.append(0)
            plain += name.raw
            plain.append(0)
            plain.append(contentsOf: simplified.utf8)
            plain.append(0)
        }
        let bound = Int(compressBound(uLong(plain.count)))
        var status = Z_OK
        var compressed = [UInt8](unsafeUninitializedCapacity: bound) { out, written in
            var length = uLong(bound)
            status = plain.withUnsafeBufferPointer {
                compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), level)
            }
            // compress2 fails only without memory: keep the block stored as is (zlib level 0 is still zlib).
            if status != Z_OK {
                length = uLong(bound)
                status = plain.withUnsafeBufferPointer {
                    compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), 0)
                }
            }
            written = status == Z_OK ? Int(length) : 0
        }
        if status != Z_OK { compressed = [] }
        return Block(flags: flags, compressed: compressed, plainSize: UInt32(truncatingIfNeeded: plain.count))
    }

    /// ``AppCode/isCompilerMade(_:)`` of `readable` (whose UTF-8 bytes are `bytes`), read off the bytes where
    /// that parse is known to come to a plain prefix test: an ASCII name (bytes and characters one to one) that
    /// starts with neither an async piece's `(` nor `specialized ` and whose words before its first `<` are not a
    /// specialization's is its own core, so it is compiler-made exactly when a compiler-made prefix starts it.
    /// Other names are parsed by ``AppCode/isCompilerMade(_:)`` (the parse walks the string by characters: it
    /// was a tenth of the writer's work on swift-format, where a quarter of the names pass the pre-check).
    static func isCompilerMade(_ bytes: [UInt8], _ readable: String) -> Bool {
        guard mayBeCompilerMade(bytes) else { return false }
        return bytes.withUnsafeBufferPointer { name in
            guard let base = name.baseAddress, name.allSatisfy({ $0 < 0x80 }) else {
                return AppCode.isCompilerMade(readable)
            }
            func starts(_ word: [UInt8], at start: Int = 0) -> Bool {
                start + word.count <= name.count && memcmp(base + start, word, word.count) == 0
            }
            if starts(openParenthesis) || starts(specialized) { return AppCode.isCompilerMade(readable) }
            if let found = memchr(base, 0x3c, name.count) {  // "<"
                let open = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                let isSpecialization =
                    open >= specialization.count && starts(specialization, at: open - specialization.count)
                if isSpecialization && memmemBytes(base, open, of: spacedOf) == nil {
                    return AppCode.isCompilerMade(readable)
                }
            }
            return compilerMadePrefixes.contains { starts($0) }
        }
    }

    /// Where `word` first occurs in the `count` bytes at `base`, or nil.
    private static func memmemBytes(_ base: UnsafePointer<UInt8>, _ count: Int, of word: [UInt8]) -> Int? {
        guard let first = word.first, count >= word.count else { return nil }
        var at = 0
        while at + word.count <= count, let found = memchr(base + at, Int32(first), count - word.count + 1 - at) {
            at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if memcmp(base + at, word, word.count) == 0 { return at }
            at += 1
        }
        return nil
    }

    private static let openParenthesis = Array("(".utf8)
    private static let specialized = Array("specialized ".utf8)
    private static let specialization = Array("specialization ".utf8)
    private static let spacedOf = Array(" of ".utf8)

    /// Whether a readable name may be compiler-made: one of ``AppCode``'s compiler-made prefixes occurs where
    /// ``AppCode/isCompilerMade(_:)`` may find it, at the start or right after the words it strips (an async
    /// piece's `… for `, `specialized `, a specialization's `> of `). A necessary condition, so
    /// ``AppCode/isCompilerMade(_:)`` (a parse of the string, much slower than these byte searches) is asked
    /// only then; it holds for about a quarter of swift-format's names.
    static func mayBeCompilerMade(_ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
            func hasPrefix(at start: Int) -> Bool {
                compilerMadePrefixes.contains {
                    start + $0.count <= bytes.count && memcmp(base + start, $0, $0.count) == 0
                }
            }
            if hasPrefix(at: 0) { return true }
            // The words end with a space: only after a space can a prefix count (one scan, not one per prefix).
            var at = 0
            while at < bytes.count, let found = memchr(base + at, 0x20, bytes.count - at) {
                let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
                if coreStarts.contains(where: { end >= $0.count && memcmp(base + end - $0.count, $0, $0.count) == 0 })
                    && hasPrefix(at: end)
                {
                    return true
                }
                at = end
            }
            return false
        }
    }

    /// ``AppCode``'s compiler-made prefixes, as bytes.
    private static let compilerMadePrefixes = AppCode.compilerMadePrefixes.map { Array($0.utf8) }
    /// The endings of the words ``AppCode/isCompilerMade(_:)`` strips, after which a compiler-made prefix counts.
    private static let coreStarts: [[UInt8]] = ["for ", "specialized ", " of "].map { Array($0.utf8) }
}
