import CohorlyCrashModel

/// Symbolicates addresses of one ELF module: DWARF (functions, inline chains, lines) when the debug file has
/// it, else the symbol table (function + offset).
///
/// The index is built once, lazily per compile unit, and reused for every address, so create one per module
/// and feed it all of that module's addresses. Not thread-safe: use one instance per thread.
public final class ModuleSymbolicator {
    /// Facts about the file the symbols come from.
    public let debugFile: ObjectInfo
    /// The page-aligned `p_vaddr` of the first `PT_LOAD` segment: a crash report's `pc - base + loadAddress`
    /// is the file-relative address to look up (0 for PIE executables and shared libraries).
    public let loadAddress: UInt64
    /// Why DWARF could not be used (nil when it is used, or the file simply has none).
    public let dwarfError: SymbolsError?

    private let dwarf: DwarfIndex?
    /// The symbol cache that answers instead of DWARF and the symbol table (``init(cache:codeFile:)``), or nil.
    private let cache: SymbolCacheReader?
    private let file: ElfFile
    private let codeFile: String?
    /// Read on first need (most addresses are answered by DWARF alone).
    lazy var symbols: SymbolTable = {
        let table = SymbolTable(file: file)
        if table.count == 0, let codeFile, codeFile != file.path,
            let code = try? ElfFile(path: codeFile)
        {
            return SymbolTable(file: code)
        }
        return table
    }()
    /// Per symbol of `symbols`: the number in `text` of its raw name, its readable name's being the next (-1:
    /// not made yet). 4 bytes a symbol: a binary may have 100,000 of them.
    @exclusivity(unchecked) private var symbolNames: [Int32] = []
    /// The numbers in `text` of the symbols' source files, by where their names are in the mapped file.
    @exclusivity(unchecked) private var symbolFiles: [UnsafePointer<CChar>: Int32] = [:]
    /// The names and paths of every frame produced so far.
    package let text = TextTable()
    /// The frames of the address being looked up (kept to reuse its storage).
    private var scratch: [FrameRecord] = []

    /// Opens `debugFile` (the binary itself when it has DWARF, or its separate debug file). When
    /// `codeFile` is given and the debug file has no symbol table, the code file's symbols are used.
    public init(debugFile path: String, codeFile: String? = nil) throws(SymbolsError) {
        let file = try ElfFile(path: path)
        let info = ObjectInfo(file: file)
        debugFile = info
        loadAddress = file.firstLoadAddress()
        var index: DwarfIndex?
        var error: SymbolsError?
        if info.hasDebugInfo {
            do {
                index = try DwarfIndex(file: file, text: text)
            } catch let caught {
                error = caught
            }
        }
        dwarf = index
        dwarfError = error
        self.file = file
        self.codeFile = codeFile
        cache = nil
    }

    /// Opens the symbol cache at `cache` (made by ``SymbolCacheWriter``) to answer for `codeFile`: mapped, its
    /// header checked, nothing else read until addresses are looked up. DWARF and the symbol table are not read.
    /// - Throws: ``SymbolsError/symbolCacheMismatch(path:file:cacheBuildId:fileBuildId:)`` when the cache was
    ///   made for another build id than `codeFile`'s, ``SymbolsError/badSymbolCache(path:reason:)`` when it is no
    ///   usable cache, or `codeFile`'s opening errors.
    public init(cache path: String, codeFile: String) throws(SymbolsError) {
        let file = try ElfFile(path: codeFile, mapped: false)
        let info = ObjectInfo(file: file)
        let reader = try SymbolCacheReader(path: path)
        guard let id = info.buildId, id == reader.buildId else {
            throw .symbolCacheMismatch(
                path: path, file: codeFile, cacheBuildId: DebugId.codeId(reader.buildId),
                fileBuildId: info.buildId.map(DebugId.codeId) ?? "")
        }
        debugFile = info
        loadAddress = file.firstLoadAddress()
        dwarf = nil
        dwarfError = nil
        self.file = file
        self.codeFile = codeFile
        cache = reader
        sourceRoot = reader.sourceRoot
    }

    deinit {
        // The background thread may still be demangling names of the last batch, which point into `file` (and the
        // code file `symbols` may have opened): it ends here, before any stored property is destroyed (`text` is
        // destroyed after them, and `dwarf` holds it too).
        text.abandonBackgroundWork()
    }

    /// Whether the answers come from a symbol cache (``init(cache:codeFile:)``).
    public var usesSymbolCache: Bool { cache != nil }

    /// The root package's directory of the program this file is the executable (or its debug file) of: the
    /// compile unit of `main` names it (``AppCode/sourceRoot(compilationDirectory:)``). Nil without DWARF or a
    /// `main`. Found on first use (a scan of the symbol table's entries).
    public private(set) lazy var sourceRoot: String? = {
        guard let dwarf else { return nil }
        let code = codeFile.flatMap { $0 == file.path ? nil : try? ElfFile(path: $0) }
        guard let main = SymbolTable.mainAddress(in: file) ?? code.flatMap(SymbolTable.mainAddress(in:)),
            let directory = dwarf.compilationDirectory(at: main)
        else { return nil }
        return AppCode.sourceRoot(compilationDirectory: directory)
    }()

    /// The DWARF index (for tests).
    var dwarfIndex: DwarfIndex? { dwarf }

    /// Whether DWARF's line and inline information is available: read from DWARF, or from a symbol cache made of
    /// it (a module answered by its cache is not one with symbol names only).
    public var hasDWARF: Bool { dwarf != nil || cache != nil }

    /// The frames for a file-relative virtual address (as `llvm-symbolizer --obj` takes it). A return address
    /// (every frame of a backtrace but the crashed thread's first) is looked up at `address - 1`, so the call
    /// instruction, not the next line, is reported.
    public func symbolicate(_ address: UInt64, isReturnAddress: Bool = false) -> SymbolicatedAddress {
        scratch.removeAll(keepingCapacity: true)
        let lookup = records(for: address, isReturnAddress: isReturnAddress, into: &scratch)
        return SymbolicatedAddress(address: lookup, frames: scratch.map(frame))
    }

    /// A frame record of this symbolicator as a ``SymbolicatedFrame`` (its names and path as strings).
    package func frame(_ record: FrameRecord) -> SymbolicatedFrame {
        SymbolicatedFrame(
            function: text.string(record.function), rawFunction: text.string(record.rawFunction),
            file: text.string(record.file), line: Int(record.line), column: Int(record.column),
            isInlined: record.isInlined, symbolOffset: record.symbolOffset)
    }

    /// The frames for an address as ``symbolicate(_:isReturnAddress:)`` finds them, appended to `frames` as
    /// numbers in ``text`` (no strings made or copied: for tools writing many addresses). Returns the address
    /// looked up.
    package func records(for address: UInt64, isReturnAddress: Bool, into frames: inout [FrameRecord]) -> UInt64 {
        let lookup = isReturnAddress && address > 0 ? address - 1 : address
        if let cache {
            cache.lookup(lookup, into: &frames, text: text)
            return lookup
        }
        let first = frames.count
        defer {
            // Names dropped since they were resolved (see `TextTable.readableNamesLimit`) are made again.
            for index in first..<frames.count { text.revive(frames[index].function) }
        }
        if let dwarf, let depth = dwarf.lookup(lookup, into: &frames) {
            let last = frames.count - 1
            if depth == 0 {
                // A unit covers the address but no function does: the symbol's name, the row's place.
                if let symbol = symbols.lookup(lookup) {
                    let names = symbolName(symbol)
                    frames[last].function = names.readable
                    frames[last].rawFunction = names.raw
                    if frames[last].file < 0 { frames[last].file = names.file }
                }
            } else if frames[last].rawFunction < 0, let symbol = symbols.lookup(lookup) {
                let names = symbolName(symbol)
                frames[last].function = names.readable
                frames[last].rawFunction = names.raw
            }
        } else if let symbol = symbols.lookup(lookup) {
            let names = symbolName(symbol)
            frames.append(
                FrameRecord(
                    function: names.readable, rawFunction: names.raw, file: names.file, line: 0, column: 0,
                    isInlined: false, symbolOffset: lookup - symbols.addresses[symbol]))
        }
        return lookup
    }

    /// The frames for many addresses, looked up in ascending address order (neighbouring lookups then share
    /// cache lines and the pieces of the index they build) and each distinct address once. The frames of
    /// `addresses[i]` are `batch.records[batch.frames(of: i)]`. Their readable names may still be in the making
    /// on the background thread: read them through ``TextTable/withView(_:)`` (which makes or waits for each as
    /// it is read) or ``TextTable/string(_:)``.
    package func records(for addresses: [UInt64], isReturnAddress: Bool = false) -> FrameBatch {
        let order = Self.ascendingOrder(addresses)
        text.demanglePending()  // the names of the batch before, when they are still in the making
        text.dropReadableNamesOverLimit()  // the frames of the batch before are written
        text.defersDemangling = true
        defer { text.defersDemangling = false }
        // Enough addresses for stretches of names to come: the background thread is asked for now, so that it runs
        // by the time the first stretch is handed over (the lookups of a unit's first address can take a while).
        if cache == nil && addresses.count >= ModuleSymbolicator.backgroundBatchSize { text.startBackgroundTask() }
        var batch = FrameBatch(
            records: [], groups: [], groupOfAddress: Array(repeating: 0, count: addresses.count))
        batch.records.reserveCapacity(addresses.count * 2)
        batch.groups.reserveCapacity(addresses.count)
        for position in order {
            let index = Int(position)
            let address = addresses[index]
            if let last = batch.groups.last, last.address == address {
                batch.groupOfAddress[index] = Int32(batch.groups.count - 1)
                continue
            }
            let start = batch.records.count
            _ = records(for: address, isReturnAddress: isReturnAddress, into: &batch.records)
            batch.groupOfAddress[index] = Int32(batch.groups.count)
            batch.groups.append((address, start..<batch.records.count))
        }
        // The names still in the making are made as the batch is read (``TextTable/View``) while the background
        // thread works through the rest, or by the next batch.
        text.closeBatch()
        return batch
    }

    /// The batch size from which ``records(for:isReturnAddress:)`` starts the background thread before its lookups.
    static let backgroundBatchSize = 256

    /// The positions of `addresses` in ascending address order (stable).
    static func ascendingOrder(_ addresses: [UInt64]) -> [Int32] {
        var order = (0..<Int32(addresses.count)).map { $0 }
        addresses.withUnsafeBufferPointer { addresses in RadixOrder.sort(&order) { addresses[Int($0)] } }
        return order
    }

    /// The numbers in ``text`` of a symbol's raw and readable name and its file, made on first use.
    private func symbolName(_ index: Int) -> (raw: Int32, readable: Int32, file: Int32) {
        if symbolNames.isEmpty { symbolNames = Array(repeating: -1, count: symbols.count) }
        var raw = symbolNames[index]
        if raw < 0 {
            guard let name = symbols.name(at: index) else { return (-1, -1, -1) }
            raw = text.add(mapped: name)
            _ = text.add(demangling: name)  // raw + 1: the table numbers its texts in order
            symbolNames[index] = raw
        }
        var file: Int32 = -1
        if let path = symbols.file(at: index) {
            if let known = symbolFiles[path] {
                file = known
            } else {
                file = text.number(of: String(cString: path))
                symbolFiles[path] = file
            }
        }
        return (raw, raw + 1, file)
    }
}
