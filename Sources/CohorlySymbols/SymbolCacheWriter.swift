import CZlib
import CohorlyCrashModel
import Dispatch

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
    }

    /// A row: a stretch of addresses with one answer (its frames, outermost first).
    private struct Row {
        var start: UInt64
        var length: UInt64
        var frames: [Frame]
    }

    private struct Builder {
        var blockStarts: [UInt64] = []
        var blockRowOffsets: [UInt32] = []
        var rows: [UInt8] = []
        var block: [Row] = []
        /// Names by their numbers in the symbolicator's text (raw << 32 | readable).
        var nameNumbers: [Int64: Int32] = [:]
        /// Per name: the readable name, then the raw one.
        var names: [(readable: [UInt8], raw: [UInt8])] = []
        var fileNumbers: [Int32: Int32] = [:]
        var files: [[UInt8]] = []

        mutating func add(
            _ address: UInt64, length: UInt64, frames: ArraySlice<FrameRecord>, text: TextTable.View
        ) {
            guard !frames.isEmpty else {
                closeBlock()
                return
            }
            var chain: [Frame] = []
            chain.reserveCapacity(frames.count)
            for record in frames.reversed() {
                chain.append(
                    Frame(
                        name: name(record, text), file: file(record.file, text), line: record.line,
                        column: record.column, isInlined: record.isInlined, symbolOffset: record.symbolOffset))
            }
            if let last = block.last, last.start &+ last.length == address, Self.continues(last, chain) {
                block[block.count - 1].length &+= length
                return
            }
            if let last = block.last, last.start &+ last.length != address { closeBlock() }
            if block.count == SymbolCacheFormat.rowsPerBlock { closeBlock() }
            block.append(Row(start: address, length: length, frames: chain))
        }

        /// Whether `chain` is `row`'s answer carried on (a symbol's offset grown by the row's length).
        static func continues(_ row: Row, _ chain: [Frame]) -> Bool {
            guard row.frames.count == chain.count else { return false }
            for (before, now) in zip(row.frames, chain) {
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
            let number = Int32(names.count)
            names.append(
                (
                    record.function >= 0 ? Array(text[record.function]) : [],
                    record.rawFunction >= 0 ? Array(text[record.rawFunction]) : []
                ))
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
            var previous: [Frame] = []
            for row in block {
                rows.appendULEB(row.length)
                var kept = 0
                while kept < previous.count && kept < row.frames.count && previous[kept] == row.frames[kept]
                    && row.frames[kept].symbolOffset == nil
                {
                    kept += 1
                }
                rows.appendULEB(UInt64(kept))
                rows.appendULEB(UInt64(row.frames.count - kept))
                for depth in kept..<row.frames.count {
                    let frame = row.frames[depth]
                    let reference =
                        depth < previous.count
                        ? previous[depth] : Frame(name: -1, file: -1, line: 0, column: 0, isInlined: false)
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
        }

        /// The whole file.
        func bytes(buildId: [UInt8], sourceRoot: String?) -> [UInt8] {
            typealias Field = SymbolCacheFormat.Field
            var fields = [UInt64](repeating: 0, count: Field.allCases.count)
            var body: [UInt8] = []
            func place(_ bytes: [UInt8], _ offset: Field, _ length: Field? = nil) {
                while body.count % 8 != 0 { body.append(0) }
                fields[offset.rawValue] = UInt64(SymbolCacheFormat.headerSize + body.count)
                if let length { fields[length.rawValue] = UInt64(bytes.count) }
                body += bytes
            }
            place(buildId, .buildIdOffset, .buildIdLength)
            if let sourceRoot { place(Array(sourceRoot.utf8), .sourceRootOffset, .sourceRootLength) }

            fields[Field.blockCount.rawValue] = UInt64(blockStarts.count)
            var table: [UInt8] = []
            table.reserveCapacity(blockStarts.count * 8)
            for start in blockStarts { table.appendLittleEndian(start) }
            place(table, .blockStartsOffset)
            table.removeAll(keepingCapacity: true)
            for offset in blockRowOffsets + [UInt32(truncatingIfNeeded: rows.count)] {
                table.appendLittleEndian(offset)
            }
            place(table, .blockRowOffsetsOffset)
            place(rows, .rowsOffset, .rowsLength)

            fields[Field.fileCount.rawValue] = UInt64(files.count)
            var strings: [UInt8] = []
            table.removeAll(keepingCapacity: true)
            for path in files {
                table.appendLittleEndian(UInt32(truncatingIfNeeded: strings.count))
                strings += path
                strings.append(0)
            }
            place(table, .fileOffsetsOffset)
            place(strings, .fileStringsOffset, .fileStringsLength)

            let names = SymbolCacheNames.make(self.names)
            fields[Field.nameCount.rawValue] = UInt64(self.names.count)
            place(names.flags, .nameFlagsOffset)
            fields[Field.nameBlockCount.rawValue] = UInt64(
                names.blockTable.count / SymbolCacheFormat.nameBlockEntrySize)
            fields[Field.namesPerBlock.rawValue] = UInt64(SymbolCacheFormat.namesPerBlock)
            place(names.blockTable, .nameBlockTableOffset)
            place(names.data, .namesDataOffset, .namesDataLength)

            var file = SymbolCacheFormat.magic
            file.appendLittleEndian(SymbolCacheFormat.version)
            file.appendLittleEndian(UInt32(SymbolCacheFormat.headerSize))
            for field in fields { file.appendLittleEndian(field) }
            return file + body
        }
    }
}

/// The names part of a symbol cache: each name's flags, and the names (readable, raw, simplified) in compressed
/// blocks, made on every core (demangling the simplified forms and compressing are most of the writer's work).
enum SymbolCacheNames {
    static func make(_ names: [(readable: [UInt8], raw: [UInt8])]) -> (
        flags: [UInt8], blockTable: [UInt8], data: [UInt8]
    ) {
        let perBlock = SymbolCacheFormat.namesPerBlock
        let blockCount = (names.count + perBlock - 1) / perBlock
        let flags = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, names.count))
        let blocks = UnsafeMutableBufferPointer<[UInt8]>.allocate(capacity: max(1, blockCount))
        let sizes = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: max(1, blockCount))
        defer {
            flags.deallocate()
            blocks.baseAddress?.deinitialize(count: blockCount)
            blocks.deallocate()
            sizes.deallocate()
        }
        let output = Output(flags: flags, blocks: blocks, sizes: sizes)
        // Strided over the cores: neighbouring blocks cost alike.
        let workers = max(1, min(8, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for block in stride(from: worker, to: blockCount, by: workers) {
                output.make(block, names)
            }
        }
        var table: [UInt8] = []
        var data: [UInt8] = []
        for block in 0..<blockCount {
            table.appendLittleEndian(UInt64(data.count))
            table.appendLittleEndian(UInt32(truncatingIfNeeded: blocks[block].count))
            table.appendLittleEndian(sizes[block])
            data += blocks[block]
        }
        return (Array(flags[0..<names.count]), table, data)
    }

    /// Whether a readable name may be compiler-made: one of ``AppCode``'s compiler-made prefixes occurs where
    /// ``AppCode/isCompilerMade(_:)`` may find it, at the start or right after the words it strips (an async
    /// piece's `… for `, `specialized `, a specialization's `> of `). A necessary condition, so
    /// ``AppCode/isCompilerMade(_:)`` (a parse of the string, much slower than these byte searches) is asked
    /// only then; it holds for about a quarter of swift-format's names.
    static func mayBeCompilerMade(_ name: [UInt8]) -> Bool {
        name.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return false }
            func endsWith(_ end: Int, _ word: [UInt8]) -> Bool {
                end >= word.count && memcmp(base + end - word.count, word, word.count) == 0
            }
            for prefix in compilerMadePrefixes {
                guard let first = prefix.first else { continue }
                var at = 0
                while at + prefix.count <= bytes.count,
                    let found = memchr(base + at, Int32(first), bytes.count - prefix.count + 1 - at)
                {
                    at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                    if memcmp(base + at, prefix, prefix.count) == 0
                        && (at == 0 || coreStarts.contains(where: { endsWith(at, $0) }))
                    {
                        return true
                    }
                    at += 1
                }
            }
            return false
        }
    }

    /// ``AppCode``'s compiler-made prefixes, as bytes.
    private static let compilerMadePrefixes = AppCode.compilerMadePrefixes.map { Array($0.utf8) }
    /// The endings of the words ``AppCode/isCompilerMade(_:)`` strips, after which a compiler-made prefix counts.
    private static let coreStarts: [[UInt8]] = ["for ", "specialized ", " of "].map { Array($0.utf8) }

    /// Where the workers put their results: each block and each name is written by exactly one worker.
    private struct Output: @unchecked Sendable {
        /// zlib's fastest level: on swift-format's 26 MB of names it compresses in two thirds of level 6's time,
        /// to 4.2 MB against 3.6 MB (the cache stays well under the GSYM's size).
        static let level: Int32 = 1

        let flags: UnsafeMutableBufferPointer<UInt8>
        let blocks: UnsafeMutableBufferPointer<[UInt8]>
        let sizes: UnsafeMutableBufferPointer<UInt32>

        func make(_ block: Int, _ names: [(readable: [UInt8], raw: [UInt8])]) {
            let perBlock = SymbolCacheFormat.namesPerBlock
            var plain: [UInt8] = []
            for index in block * perBlock..<min(names.count, (block + 1) * perBlock) {
                let name = names[index]
                let readable = String(decoding: name.readable, as: UTF8.self)
                let raw = String(decoding: name.raw, as: UTF8.self)
                let simplified =
                    Demangler.name(
                        function: name.readable.isEmpty ? nil : readable, rawFunction: name.raw.isEmpty ? nil : raw,
                        style: .simplified) ?? ""
                var kind: SymbolCacheFormat.NameFlags = []
                if SymbolCacheNames.mayBeCompilerMade(name.readable) && AppCode.isCompilerMade(readable) {
                    kind.insert(.compilerMade)
                }
                if readable.hasPrefix("Swift runtime failure: ") { kind.insert(.runtimeFailure) }
                flags[index] = kind.rawValue
                plain += name.readable
                plain.append(0)
                plain += name.raw
                plain.append(0)
                plain += Array(simplified.utf8)
                plain.append(0)
            }
            var compressed = [UInt8](repeating: 0, count: Int(compressBound(uLong(plain.count))))
            var length = uLong(compressed.count)
            let status = compressed.withUnsafeMutableBufferPointer { out in
                plain.withUnsafeBufferPointer {
                    compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), Self.level)
                }
            }
            // compress2 fails only without memory: keep the block stored as is (zlib level 0 is still zlib).
            if status != Z_OK {
                length = uLong(compressed.count)
                _ = compressed.withUnsafeMutableBufferPointer { out in
                    plain.withUnsafeBufferPointer {
                        compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), 0)
                    }
                }
            }
            blocks.initializeElement(at: block, to: Array(compressed[0..<Int(length)]))
            sizes[block] = UInt32(truncatingIfNeeded: plain.count)
        }
    }
}
