import CDwarf

#if canImport(Glibc)
    import Glibc
#endif

/// Address → compile unit → scopes and line rows, for one DWARF file. Unit ranges come from each unit's own
/// `DW_AT_ranges`/`low_pc` (Swift and clang emit no `.debug_aranges`, which libdw's lookups need); a unit's
/// functions are indexed on first use and kept (a function's inline tree when an address falls in it), so a batch
/// of addresses pays for each unit once. Abbreviation tables are decoded once per table, whichever units share it.
final class DwarfIndex {
    private let file: ElfFile
    private let dwarf: OpaquePointer
    // Read on every lookup, so without dynamic exclusivity checks (see UnitIndex: one thread, no overlap).
    @exclusivity(unchecked) private var units: [Unit] = []
    /// The units' address ranges (`scope` is the unit's position in `units`): of units that give their own.
    @exclusivity(unchecked) private var unitRanges = SortedRanges([])
    /// The units that give no range of their own (in Swift binaries, mostly the ClangImporter's units of imported
    /// C modules, with types and no code), by position in `units`. Their functions' ranges are read only when an
    /// address misses every unit range (`rangelessRanges`), as every such unit must then be read whole.
    private var rangelessUnits: [Int32] = []
    /// How many units' ranges came from `.debug_aranges`.
    private(set) var unitsFromAranges = 0
    @exclusivity(unchecked) private var rangelessRanges: SortedRanges?
    /// Where names and paths are kept (shared with the symbol-table fallback).
    private let text: TextTable
    /// The abbreviation tables decoded so far (shared by every unit's scanner).
    private let abbreviationCache = DieScanner.AbbreviationCache()
    /// Every function name resolved so far, each demangled once; scopes refer to them by position.
    @exclusivity(unchecked) private var functionNames: [FunctionName] = []
    /// Names by the address of their bytes in the mapped file: inlined copies of a function share their
    /// abstract origin's string, so most are found here without building a Swift string.
    @exclusivity(unchecked) private var nameByText = IntegerMap()
    /// Names of inlined scopes by the offset of the DIE they are read from (see `UnitIndex.Scope.dieOffset`):
    /// the inlined copies of a function share it, and each after the first reads no DIE at all.
    @exclusivity(unchecked) private var nameByDie = IntegerMap()

    private final class Unit {
        var die: Dwarf_Die
        var version: Int = 4
        @exclusivity(unchecked) var index: UnitIndex?
        @exclusivity(unchecked) var lines: LineTable?
        /// Per scope of `index`: its entry in `functionNames` (-1: none, -2: not resolved yet).
        @exclusivity(unchecked) var scopeNames: [Int32] = []
        /// Per file number of the unit's line program: its number in `text` (-1: unnamed).
        @exclusivity(unchecked) var callFiles: [Int32] = []
        /// `DW_AT_comp_dir`, joined to relative file names (libdw leaves names under directory 0 relative).
        lazy var compilationDirectory: String? = {
            var attribute = Dwarf_Attribute()
            guard dwarf_attr(&die, UInt32(DW_AT_comp_dir), &attribute) != nil,
                let text = dwarf_formstring(&attribute)
            else { return nil }
            return String(cString: text)
        }()
        init(die: Dwarf_Die) { self.die = die }
    }

    /// Opens the DWARF of `file`; throws when there is none or it cannot be read (e.g. zstd sections without libzstd). Names
    /// and paths of the frames found go to `text`.
    init(file: ElfFile, text: TextTable) throws(SymbolsError) {
        self.file = file
        self.text = text
        file.decompressZstdSections()
        guard let dwarf = dwarf_begin_elf(file.elf, DWARF_C_READ, nil) else {
            throw .unreadableDebugInfo(path: file.path, reason: DwarfIndex.lastError())
        }
        self.dwarf = dwarf
        var cu: OpaquePointer?
        var next: OpaquePointer?
        var version: Dwarf_Half = 0
        var unitType: UInt8 = 0
        var unitDie = Dwarf_Die()
        var allRanges: [UnitIndex.Range] = []
        // `.debug_aranges`, when the file has it (and the scanner can read it): each listed unit's ranges.
        var listed: [UInt64: [(low: UInt64, high: UInt64)]] = [:]
        if file.header.e_ident.5 == UInt8(ELFDATA2LSB), let section = sectionBounds[".debug_aranges"],
            let entries = DebugAranges.read(section, addressSize: addressSize)
        {
            for entry in entries { listed[entry.unitOffset, default: []].append((entry.low, entry.high)) }
        }
        while dwarf_get_units(dwarf, cu, &next, &version, &unitType, &unitDie, nil) == 0 {
            cu = next
            guard
                unitType == UInt8(DW_UT_compile) || unitType == UInt8(DW_UT_partial)
                    || unitType == UInt8(DW_UT_skeleton)
            else { continue }
            let unit = Unit(die: unitDie)
            unit.version = Int(version)
            let number = Int32(units.count)
            units.append(unit)
            let headerOffset = dwarf_dieoffset(&unitDie) &- dwarf_cuoffset(&unitDie)
            var ranges = listed[headerOffset] ?? []
            if ranges.isEmpty {
                ranges = DwarfRanges.of(&unitDie)
            } else {
                unitsFromAranges += 1
            }
            if ranges.isEmpty { rangelessUnits.append(number) }
            for range in ranges {
                allRanges.append(.init(low: range.low, high: range.high, scope: number))
            }
        }
        unitRanges = SortedRanges(allRanges)
    }

    deinit {
        if let lineDwarf { dwarf_end(lineDwarf) }
        dwarf_end(dwarf)
    }

    /// The linear-pass scanner for a unit (little-endian files only: it reads multi-byte values itself), its
    /// abbreviations from the index's cache when another unit's scanner decoded them.
    private func scanner(_ unitDie: Dwarf_Die, version: Int) -> DieScanner? {
        guard file.header.e_ident.5 == UInt8(ELFDATA2LSB), let info = sections.info, let abbreviations = sections.abbrev
        else { return nil }
        let made = DieScanner(
            dwarf: dwarf, unitDie: unitDie, version: version, section: info, abbreviations: abbreviations,
            cache: abbreviationCache)
        made?.rangeListSection = sectionBounds[".debug_ranges"]
        return made
    }

    /// Where `.debug_info`'s and `.debug_abbrev`'s bytes are in memory (after libdw decompressed them), so a
    /// unit whose header claims more than the section holds cannot send the linear pass past it (found by the
    /// symbolicator fuzzer).
    private var sections: (info: DieScanner.Bounds?, abbrev: DieScanner.Bounds?) {
        (sectionBounds[".debug_info"], sectionBounds[".debug_abbrev"])
    }

    /// The debug sections this index reads itself, by name (`.zdebug_*` under its `.debug_*` name), as libdw
    /// holds them in memory (decompressed).
    private lazy var sectionBounds: [String: DieScanner.Bounds] = {
        var found: [String: DieScanner.Bounds] = [:]
        let wanted: Set<String> = [
            ".debug_info", ".debug_abbrev", ".debug_line", ".debug_line_str", ".debug_str", ".debug_ranges",
            ".debug_aranges",
        ]
        var names = 0
        guard elf_getshdrstrndx(file.elf, &names) == 0 else { return found }
        var scn = elf_nextscn(file.elf, nil)
        while let current = scn {
            scn = elf_nextscn(file.elf, current)
            var shdr = GElf_Shdr()
            guard gelf_getshdr(current, &shdr) != nil, let name = elf_strptr(file.elf, names, Int(shdr.sh_name))
            else { continue }
            var key = String(cString: name)
            if key.hasPrefix(".zdebug_") { key = "." + key.dropFirst(2) }
            guard wanted.contains(key), found[key] == nil, let data = elf_getdata(current, nil),
                let start = data.pointee.d_buf
            else { continue }
            let base = UnsafePointer<UInt8>(start.assumingMemoryBound(to: UInt8.self))
            found[key] = DieScanner.Bounds(start: base, end: base + Int(data.pointee.d_size))
        }
        return found
    }()

    /// The size of an address in this file (8 in a 64-bit ELF file, 4 in a 32-bit one).
    private var addressSize: Int { file.header.e_ident.4 == UInt8(ELFCLASS32) ? 4 : 8 }

    static func lastError() -> String {
        guard let message = dwarf_errmsg(-1) else { return "unknown libdw error" }
        return String(cString: message)
    }

    /// Whether any unit has code.
    var isEmpty: Bool { unitRanges.ranges.isEmpty && readRangelessUnits().ranges.isEmpty }

    /// The ranges of the functions of the units without ranges of their own (read on first call).
    private func readRangelessUnits() -> SortedRanges {
        if let rangelessRanges { return rangelessRanges }
        var all: [UnitIndex.Range] = []
        for number in rangelessUnits {
            let unit = units[Int(number)]
            let index = UnitIndex(unitDie: unit.die, scanner: scanner(unit.die, version: unit.version))
            // Kept only with functions: no address leads to a unit without (swift-format has 927 units without
            // ranges, most of them without code).
            if !index.functionRanges.isEmpty { unit.index = index }
            for range in index.functionRanges { all.append(.init(low: range.low, high: range.high, scope: number)) }
        }
        let made = SortedRanges(all)
        rangelessRanges = made
        return made
    }

    /// A function's name as stored (linkage name when there is one) and demangled: numbers in `text`.
    private struct FunctionName {
        var raw: Int32
        var readable: Int32
    }

    /// Appends the frames for `address` to `frames`, innermost first: one per scope of its inline chain, each
    /// with the place inside it (the line row for the innermost, the call site for the others). When no
    /// function covers the address but its unit does, one nameless frame carries the line row. Returns the
    /// length of the inline chain, or nil when no unit covers the address.
    func lookup(_ address: UInt64, into frames: inout [FrameRecord]) -> Int? {
        guard let unit = unit(containing: address) else { return nil }
        // Line rows first: libdw's own copy of them lives only while they are read (see `loadLines`), and the
        // index then grows into the memory it gave back.
        if unit.lines == nil { loadLines(unit) }
        if unit.index == nil { unit.index = UnitIndex(unitDie: unit.die, scanner: namesScanner(of: unit)) }
        guard let index = unit.index else { return nil }
        var file: Int32 = -1
        var line: UInt32 = 0
        var column: UInt32 = 0
        if let table = unit.lines, let row = table.row(at: address) {
            file = row.file
            line = row.line
            column = row.column
        }
        var scope = index.innermost(at: address)
        if scope < 0 {
            frames.append(
                FrameRecord(
                    function: -1, rawFunction: -1, file: file, line: line, column: column, isInlined: false))
            return 0
        }
        if unit.scopeNames.count != index.scopes.count {
            unit.scopeNames = [Int32](repeating: -2, count: index.scopes.count)
        }
        var depth = 0
        while scope >= 0 {
            let entry = index.scopes[Int(scope)]
            var name = unit.scopeNames[Int(scope)]
            if name == -2 {
                name = nameNumber(at: entry.dieOffset, in: unit, isInlined: entry.parent >= 0)
                unit.scopeNames[Int(scope)] = name
            }
            let names = name >= 0 ? functionNames[Int(name)] : FunctionName(raw: -1, readable: -1)
            frames.append(
                FrameRecord(
                    function: names.readable, rawFunction: names.raw, file: file, line: line, column: column,
                    isInlined: entry.parent >= 0))
            depth += 1
            if entry.parent >= 0 {
                file = callFile(unit, Int(entry.callFile))
                line = entry.callLine
                column = entry.callColumn
            }
            scope = entry.parent
        }
        return depth
    }

    /// `DW_AT_comp_dir` of the compile unit covering `address` (file-relative), when one does and says it.
    func compilationDirectory(at address: UInt64) -> String? {
        unit(containing: address)?.compilationDirectory
    }

    /// The unit whose range contains `address`; failing that, the rangeless unit one of whose functions does.
    private func unit(containing address: UInt64) -> Unit? {
        var number = unitRanges.scope(containing: address)
        if number < 0 && !rangelessUnits.isEmpty {
            _ = readRangelessUnits()
            number = rangelessRanges?.scope(containing: address) ?? -1
        }
        return number >= 0 ? units[Int(number)] : nil
    }

    /// The scanner of the unit whose names were read last (kept for the next: a batch asks in address order,
    /// so mostly of the same unit).
    @exclusivity(unchecked) private var lastScanner: (unit: Unit, scanner: DieScanner?)?

    /// A scanner for `unit`'s DIEs, the last one made when it is of the same unit.
    private func namesScanner(of unit: Unit) -> DieScanner? {
        if let last = lastScanner, last.unit === unit { return last.scanner }
        let made = scanner(unit.die, version: unit.version)
        lastScanner = (unit, made)
        return made
    }

    /// The name of the function DIE at `offset` of `unit` (see ``DwarfAttributes/functionName(_:)``): read by
    /// the unit's scanner, or by libdw when the scanner leaves it to libdw.
    private func functionName(at offset: UInt64, in unit: Unit) -> UnsafePointer<CChar>? {
        let search = namesScanner(of: unit)?.functionName(at: offset) { dwarf_getstring(self.dwarf, $0, nil) }
        switch search {
        case .found(let bytes): return bytes
        case .absent: return nil
        case .unreadable, nil:
            var die = Dwarf_Die()
            guard dwarf_offdie(dwarf, offset, &die) != nil else { return nil }
            return DwarfAttributes.functionName(&die)
        }
    }

    /// The position in `functionNames` of the name of the DIE at `offset` of `unit` (-1 when it has none).
    /// Inlined scopes look their name DIE up first (many share one); a physical function's is its own.
    private func nameNumber(at offset: UInt64, in unit: Unit, isInlined: Bool) -> Int32 {
        if isInlined, let known = nameByDie[offset] { return known }
        var number: Int32 = -1
        if let bytes = functionName(at: offset, in: unit) {
            let address = UInt64(UInt(bitPattern: bytes))
            if let known = nameByText[address] {
                number = known
            } else {
                number = Int32(functionNames.count)
                functionNames.append(
                    FunctionName(
                        raw: text.add(mapped: bytes), readable: text.add(demangling: bytes)))
                nameByText.set(number, for: address)
            }
        }
        if isInlined { nameByDie.set(number, for: offset) }
        return number
    }

    /// The handle line programs are read through (see `loadLines`), and how many rows it has decoded.
    private var lineDwarf: OpaquePointer?
    private var lineDwarfRows = 0
    /// Rows after which the line handle is ended and its memory returned to the system.
    static let lineRowsPerHandle = 16_384

    /// Reads the unit's line rows and file names (for call sites) into plain tables. libdw keeps what
    /// `dwarf_getsrclines` decodes until its `Dwarf` handle ends — several times the size of the rows copied
    /// out — so they are read through a handle of their own, ended (and malloc trimmed) once it has decoded
    /// `lineRowsPerHandle` rows: at once after a large unit, after several small ones (a fresh handle finds a
    /// unit by reading every unit header before it). The index's handle never decodes a line program (it
    /// does only when a second handle cannot be had).
    private func loadLines(_ unit: Unit) {
        if let program = lineProgram(of: unit) {
            let numbers = program.files.map { text.number(of: absolute(unit, $0)) }
            unit.lines = LineTable(program: program, fileNumbers: numbers)
            unit.callFiles = numbers
            return
        }
        if lineDwarf == nil { lineDwarf = dwarf_begin_elf(file.elf, DWARF_C_READ, nil) }
        let scratch = lineDwarf
        defer {
            lineDwarfRows += unit.lines?.count ?? 0
            if let scratch, lineDwarfRows >= DwarfIndex.lineRowsPerHandle {
                dwarf_end(scratch)
                lineDwarf = nil
                lineDwarfRows = 0
                // What libdw gave back is in small blocks malloc keeps for reuse: return them to the system
                // (the index that follows allocates large arrays elsewhere).
                malloc_trim(0)
            }
        }
        var die = unit.die
        if let scratch {
            var own = Dwarf_Die()
            if dwarf_offdie(scratch, dwarf_dieoffset(&die), &own) != nil { die = own }
        }
        unit.lines = LineTable(unitDie: die) { self.text.number(of: self.absolute(unit, $0)) }
        var files: OpaquePointer?
        var count = 0
        if dwarf_getsrcfiles(&die, &files, &count) == 0, let files {
            unit.callFiles = (0..<count).map { index in
                guard let name = dwarf_filesrc(files, index, nil, nil) else { return -1 }
                return text.number(of: absolute(unit, String(cString: name)))
            }
        }
    }

    /// The unit's line program decoded from the mapped `.debug_line` (nil when it has none or the decoder leaves
    /// it to libdw).
    private func lineProgram(of unit: Unit) -> LineProgram? {
        guard file.header.e_ident.5 == UInt8(ELFDATA2LSB), let line = sectionBounds[".debug_line"] else { return nil }
        var attribute = Dwarf_Attribute()
        var offset: Dwarf_Word = 0
        guard dwarf_attr(&unit.die, UInt32(DW_AT_stmt_list), &attribute) != nil,
            dwarf_formudata(&attribute, &offset) == 0
        else { return nil }
        return LineProgram(
            sections: .init(
                line: line, lineStrings: sectionBounds[".debug_line_str"], strings: sectionBounds[".debug_str"]),
            offset: offset, compilationDirectory: unit.compilationDirectory)
    }

    /// The number in `text` of the path of the unit's file number `index` (a `DW_AT_call_file`), -1 when
    /// unknown.
    private func callFile(_ unit: Unit, _ index: Int) -> Int32 {
        index >= 0 && index < unit.callFiles.count ? unit.callFiles[index] : -1
    }

    private func absolute(_ unit: Unit, _ path: String) -> String {
        if !path.hasPrefix("/"), let directory = unit.compilationDirectory, !directory.isEmpty {
            return DwarfIndex.normalize(directory + "/" + path)
        }
        return DwarfIndex.normalize(path)
    }

    /// libdw joins a directory ending in `/` and a name with another `/` (`//<compiler-generated>`).
    static func normalize(_ path: String) -> String {
        var previous: UInt8 = 0
        var doubled = false
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") && previous == byte {
                doubled = true
                break
            }
            previous = byte
        }
        guard doubled else { return path }
        var result = ""
        var previousSlash = false
        for char in path {
            if char == "/" && previousSlash { continue }
            previousSlash = char == "/"
            result.append(char)
        }
        return result
    }

    /// For tests: for each address a unit's function covers, its function and the innermost scope found by
    /// walking down the inline tree and by the function's flat map, as DIE offsets (fresh indexes, so each
    /// is computed here).
    func innermostBothWays(_ addresses: [UInt64]) -> [(root: UInt64, walkingDown: UInt64, map: UInt64)] {
        let indexes = units.map { UnitIndex(unitDie: $0.die, scanner: scanner($0.die, version: $0.version)) }
        var result: [(root: UInt64, walkingDown: UInt64, map: UInt64)] = []
        result.reserveCapacity(addresses.count)
        for address in addresses {
            for index in indexes {
                guard let both = index.innermostBothWays(at: address) else { continue }
                result.append(
                    (
                        index.scopes[Int(both.root)].dieOffset, index.scopes[Int(both.walkingDown)].dieOffset,
                        index.scopes[Int(both.map)].dieOffset
                    ))
                break
            }
        }
        return result
    }

    /// For tests: for every `stride`-th unit, whether ``LineProgram`` decoded its line program itself, and whether
    /// its rows and file names equal libdw's (`dwarf_getsrclines`, `dwarf_getsrcfiles`; `same` is true when it
    /// left the unit to libdw).
    func compareLinePrograms(stride: Int = 1) -> [(decoded: Bool, same: Bool)] {
        Swift.stride(from: 0, to: units.count, by: max(1, stride)).map { position in
            let unit = units[position]
            guard let program = lineProgram(of: unit) else { return (false, true) }
            let numbers = program.files.map { text.number(of: absolute(unit, $0)) }
            let decoded = LineTable(program: program, fileNumbers: numbers).rows
            var die = unit.die
            let libdw = LineTable(unitDie: die) { self.text.number(of: self.absolute(unit, $0)) }.rows
            var files: OpaquePointer?
            var count = 0
            var libdwFiles: [Int32] = []
            if dwarf_getsrcfiles(&die, &files, &count) == 0, let files {
                libdwFiles = (0..<count).map { index in
                    guard let name = dwarf_filesrc(files, index, nil, nil) else { return -1 }
                    return text.number(of: absolute(unit, String(cString: name)))
                }
            }
            return (true, decoded == libdw && numbers == libdwFiles)
        }
    }

    /// For tests: over the units indexed so far, how many functions' inline trees were read and how many
    /// functions there are; and whether the units without ranges of their own were read.
    var readSoFar: (trees: Int, functions: Int, rangelessUnits: Bool) {
        let indexed = units.compactMap(\.index)
        return (
            indexed.reduce(0) { $0 + $1.treesRead }, indexed.reduce(0) { $0 + $1.roots.ranges.count },
            rangelessRanges != nil
        )
    }

    /// For tests: per unit whose ranges came from `.debug_aranges`, whether they equal the unit's own
    /// (`DW_AT_low_pc`/`high_pc`/`ranges` as libdw reads them), both sorted.
    func compareArangesWithUnitRanges() -> [Bool] {
        guard let section = sectionBounds[".debug_aranges"],
            let entries = DebugAranges.read(section, addressSize: addressSize)
        else { return [] }
        var listed: [UInt64: [[UInt64]]] = [:]
        for entry in entries { listed[entry.unitOffset, default: []].append([entry.low, entry.high]) }
        return units.compactMap { unit in
            var die = unit.die
            guard let fromAranges = listed[dwarf_dieoffset(&die) &- dwarf_cuoffset(&die)] else { return nil }
            let own = DwarfRanges.of(&die).map { [$0.low, $0.high] }
            let order: ([UInt64], [UInt64]) -> Bool = { $0.lexicographicallyPrecedes($1) }
            return fromAranges.sorted(by: order) == own.sorted(by: order)
        }
    }

    /// For tests: per scope of every unit, the name the scanner reads and libdw's (`dwarf_attr_integrate`),
    /// and whether the scanner read it itself (rather than leaving it to libdw).
    func compareNames() -> [(scanner: UnsafePointer<CChar>?, libdw: UnsafePointer<CChar>?, readItself: Bool)] {
        var result: [(scanner: UnsafePointer<CChar>?, libdw: UnsafePointer<CChar>?, readItself: Bool)] = []
        for unit in units {
            let index = UnitIndex(unitDie: unit.die, scanner: scanner(unit.die, version: unit.version))
            index.readAllTrees()
            for scope in index.scopes {
                var die = Dwarf_Die()
                let libdw = dwarf_offdie(dwarf, scope.dieOffset, &die) != nil ? DwarfAttributes.functionName(&die) : nil
                let search = namesScanner(of: unit)?.functionName(at: scope.dieOffset) {
                    dwarf_getstring(self.dwarf, $0, nil)
                }
                result.append(
                    (functionName(at: scope.dieOffset, in: unit), libdw, search != nil && search != .unreadable))
            }
        }
        return result
    }

    /// For tests: indexes every unit both ways (linear pass and libdw's walk) and reports, per unit, whether
    /// the linear pass was used and whether both found the same scopes, ranges and call sites. The linear pass
    /// reads the functions first and each one's inline tree after (all of them here), libdw's walk everything
    /// in DIE order, so scopes are compared as a set: each with its ranges, call site and its parent's. Without `libdw`,
    /// only the linear pass runs (`same` is then true): libdw's walk re-reads each subtree once per ancestor,
    /// too slow for a very deep tree. With `treesByLibdw`, the linear pass reads the functions and libdw's walk
    /// each one's inline tree (the fallback when the linear pass fails on a tree).
    func compareWalks(libdw: Bool = true, treesByLibdw: Bool = false) -> [(linear: Bool, same: Bool)] {
        units.map { unit in
            let linear = UnitIndex(unitDie: unit.die, scanner: scanner(unit.die, version: unit.version))
            linear.readAllTrees(byLibdw: treesByLibdw)
            guard libdw else { return (linear.usedLinearWalk, true) }
            let walked = UnitIndex(unitDie: unit.die, scanner: nil)
            // Everything the linear pass decodes itself: offsets, nesting, ranges and call sites.
            func shape(_ index: UnitIndex) -> [[UInt64]] {
                func key(_ scope: Int) -> [UInt64] {
                    let entry = index.scopes[scope]
                    return [entry.dieOffset] + index.ranges[index.rangesOf(scope)].flatMap { [$0.low, $0.high] }
                }
                return index.scopes.indices.map { scope in
                    let entry = index.scopes[scope]
                    let call = [UInt64(entry.callFile), UInt64(entry.callLine), UInt64(entry.callColumn)]
                    let parent = entry.parent >= 0 ? key(Int(entry.parent)) : [UInt64.max]
                    return key(scope) + call + [UInt64.max - 1] + parent
                }
                .sorted { $0.lexicographicallyPrecedes($1) }
            }
            let same =
                shape(linear) == shape(walked)
                && linear.roots.ranges.map { [$0.low, $0.high] } == walked.roots.ranges.map { [$0.low, $0.high] }
            return (linear.usedLinearWalk, same)
        }
    }

    /// For tests: per address, the inline chain (innermost first: name DIE and call site of each scope) found
    /// by an index whose functions the linear pass read and whose inline trees libdw's walk read (the
    /// fallback), and by an index libdw's walk read whole; empty chains where no function covers the address.
    func innermostChainsWithTreesByLibdw(_ addresses: [UInt64]) -> [(fallback: [[UInt64]], libdw: [[UInt64]])] {
        let fallback = units.map { unit in
            let index = UnitIndex(unitDie: unit.die, scanner: scanner(unit.die, version: unit.version))
            index.readAllTrees(byLibdw: true)
            return index
        }
        let walked = units.map { UnitIndex(unitDie: $0.die, scanner: nil) }
        func chain(_ indexes: [UnitIndex], _ address: UInt64) -> [[UInt64]] {
            for index in indexes {
                var scope = index.innermost(at: address)
                guard scope >= 0 else { continue }
                var chain: [[UInt64]] = []
                while scope >= 0 {
                    let entry = index.scopes[Int(scope)]
                    chain.append([
                        entry.dieOffset, UInt64(entry.callFile), UInt64(entry.callLine), UInt64(entry.callColumn),
                    ])
                    scope = entry.parent
                }
                return chain
            }
            return []
        }
        return addresses.map { (chain(fallback, $0), chain(walked, $0)) }
    }
}

extension DwarfIndex {
    /// Every address where ``lookup(_:into:)``'s answer may change, ascending and each once, merged with other
    /// ascending addresses (where the caller's answer changes too: the symbol table's bounds). Those are the
    /// units' range bounds and, inside each unit's ranges, its line rows where the place changes and its scopes'
    /// range bounds: between two neighbours the same unit, row and inline chain answer. A unit's rows and scopes
    /// outside its own ranges are left out (another unit answers there, or none). For the symbol cache's writer
    /// (``SymbolCacheWriter``), which looks each stretch between two bounds up as it comes: the walk goes through
    /// the file a window at a time (between two neighbouring unit range bounds) and indexes a unit when it first
    /// reaches one of its ranges, so indexing and lookups take turns rather than every unit being indexed first.
    ///
    /// Should more than ``mostActiveSpans`` unit ranges cover one window (ranges nested or overlapping, as a
    /// hostile file can make them), the walk indexes every unit at once and gives the rest of the file's bounds
    /// from one sorted list instead: a window costs the ranges covering it, and this keeps the whole walk
    /// O(n log n) in the bounds.
    struct AnswerBoundWalk {
        /// The most unit ranges covering one window before the walk goes over to one list for the rest.
        let mostActiveSpans: Int
        private let index: DwarfIndex?
        private let extra: [UInt64]
        /// The ranges that choose a unit (units' own and, where none has the address, rangeless units'
        /// functions), by start, and their bounds ascending, each once.
        private let spans: [UnitIndex.Range]
        private let edges: [UInt64]
        /// Per unit: its bounds in order, made when the walk first reaches it, and the first not taken yet.
        private var unitBounds: [[UInt64]?]
        private var unitCursors: [Int]
        /// Per unit: how many of its spans the walk has not passed yet. A unit whose spans are all passed is let
        /// go (its index, line rows and bounds) one window later, once the stretch before the window is looked
        /// up: the walk never comes back to it, and its memory serves the units after it.
        private var spansLeft: [Int32]
        private var passedUnits: [Int] = []
        private var unitsToLetGo: [Int] = []
        /// The spans covering the window.
        private var active: [Int] = []
        private var nextSpan = 0
        private var nextExtra = 0
        /// The next window's start in `edges` (-1: the addresses before the first).
        private var nextEdge = -1
        /// The window's bounds, sorted, and the next to give.
        private var window: [UInt64] = []
        private var windowPosition = 0
        private var last: UInt64?

        /// The walk over `index`'s bounds (none when nil) merged with `extra` (ascending).
        init(_ index: DwarfIndex?, merging extra: [UInt64], mostActiveSpans: Int = 64) {
            self.mostActiveSpans = mostActiveSpans
            self.index = index
            self.extra = extra
            spans =
                index.map { ($0.unitRanges.ranges + $0.readRangelessUnits().ranges).sorted { $0.low < $1.low } } ?? []
            var edges = spans.flatMap { [$0.low, $0.high] }
            AnswerBoundWalk.sortSmallOrLarge(&edges)
            var unique = 0
            for position in edges.indices where unique == 0 || edges[unique - 1] != edges[position] {
                edges[unique] = edges[position]
                unique += 1
            }
            edges.removeSubrange(unique...)
            self.edges = edges
            let unitCount = index?.units.count ?? 0
            unitBounds = Array(repeating: nil, count: unitCount)
            unitCursors = Array(repeating: 0, count: unitCount)
            spansLeft = Array(repeating: 0, count: unitCount)
            for span in spans where Int(span.scope) < unitCount { spansLeft[Int(span.scope)] &+= 1 }
        }

        /// The next bound, or nil after the last.
        mutating func next() -> UInt64? {
            while true {
                while windowPosition < window.count {
                    let bound = window[windowPosition]
                    windowPosition += 1
                    if let last, bound <= last { continue }
                    last = bound
                    return bound
                }
                guard fillWindow() else { return nil }
            }
        }

        /// Gathers the next window's bounds (the addresses before the first edge, then each window from an edge
        /// to the next); false after the last.
        private mutating func fillWindow() -> Bool {
            window.removeAll(keepingCapacity: true)
            windowPosition = 0
            letGoOfPassedUnits()
            guard nextEdge < edges.count else { return false }
            if nextEdge < 0 {
                nextEdge = 0
                takeExtra(below: edges.first)
                AnswerBoundWalk.sortSmallOrLarge(&window)
                return true
            }
            let low = edges[nextEdge]
            nextEdge += 1
            let high = nextEdge < edges.count ? edges[nextEdge] : nil
            window.append(low)
            while nextSpan < spans.count && spans[nextSpan].low <= low {
                active.append(nextSpan)
                nextSpan += 1
            }
            active.removeAll { span in
                guard spans[span].high <= low else { return false }
                let number = Int(spans[span].scope)
                if number < spansLeft.count {
                    spansLeft[number] &-= 1
                    if spansLeft[number] == 0 { passedUnits.append(number) }
                }
                return true
            }
            if active.count > mostActiveSpans {
                takeTheRest(from: low)
                return true
            }
            if let index {
                for span in active {
                    let number = Int(spans[span].scope)
                    if unitBounds[number] == nil { unitBounds[number] = index.answerBounds(of: index.units[number]) }
                    guard let bounds = unitBounds[number] else { continue }
                    var cursor = unitCursors[number]
                    while cursor < bounds.count, high.map({ bounds[cursor] < $0 }) ?? true {
                        if bounds[cursor] >= low { window.append(bounds[cursor]) }
                        cursor += 1
                    }
                    unitCursors[number] = cursor
                }
            }
            takeExtra(below: high)
            AnswerBoundWalk.sortRuns(&window)
            return true
        }

        /// Makes the window every bound from `low` on: every unit's (indexing those not indexed yet), the edges
        /// and the extra addresses, sorted; the walk ends with it. A unit's bounds outside its ranges are in it
        /// too: they change no answer, and the stretches on both sides of one are the same row.
        private mutating func takeTheRest(from low: UInt64) {
            window.append(contentsOf: edges[(nextEdge - 1)...])
            nextEdge = edges.count
            if let index {
                for number in unitBounds.indices {
                    if unitBounds[number] == nil { unitBounds[number] = index.answerBounds(of: index.units[number]) }
                    guard let bounds = unitBounds[number] else { continue }
                    window.append(contentsOf: bounds[unitCursors[number]...].lazy.filter { $0 >= low })
                    unitCursors[number] = bounds.count
                }
            }
            takeExtra(below: nil)
            AnswerBoundWalk.sortSmallOrLarge(&window)
        }

        /// Lets go of the units passed when the window before this one was made (see ``spansLeft``).
        private mutating func letGoOfPassedUnits() {
            if let index {
                for number in unitsToLetGo {
                    index.letGo(of: index.units[number])
                    // No bounds left, and a cursor at their start: the one-list fallback reads each unit's
                    // bounds from its cursor on.
                    unitBounds[number] = []
                    unitCursors[number] = 0
                }
            }
            unitsToLetGo.removeAll(keepingCapacity: true)
            swap(&unitsToLetGo, &passedUnits)
        }

        /// Moves the extra addresses below `high` (all when nil) into the window.
        private mutating func takeExtra(below high: UInt64?) {
            while nextExtra < extra.count, high.map({ extra[nextExtra] < $0 }) ?? true {
                window.append(extra[nextExtra])
                nextExtra += 1
            }
        }

        /// Sorts `values`, made of ascending runs: one or two are merged (a window's bounds are its start and one
        /// unit's bounds, then the extra addresses), more are sorted.
        static func sortRuns(_ values: inout [UInt64]) {
            var firstEnd = 1
            while firstEnd < values.count && values[firstEnd - 1] <= values[firstEnd] { firstEnd += 1 }
            guard firstEnd < values.count else { return }
            var secondEnd = firstEnd + 1
            while secondEnd < values.count && values[secondEnd - 1] <= values[secondEnd] { secondEnd += 1 }
            guard secondEnd == values.count else {
                sortSmallOrLarge(&values)
                return
            }
            values = DwarfIndex.merged(Array(values[..<firstEnd]), Array(values[firstEnd...]))
        }

        /// Sorts `values`: a comparison sort for a few, a radix sort for many.
        static func sortSmallOrLarge(_ values: inout [UInt64]) {
            if values.count < 512 { values.sort() } else { RadixOrder.sort(&values) }
        }
    }

    /// How many units are indexed now (for tests: the symbol cache's writer lets go of those it passed).
    var indexedUnitCount: Int { units.reduce(0) { $0 + ($1.index == nil ? 0 : 1) } }
    /// How many units the file has.
    var unitCount: Int { units.count }

    /// Drops what `unit` was indexed into (made again should a lookup reach it).
    private func letGo(of unit: Unit) {
        unit.index = nil
        unit.lines = nil
        unit.scopeNames = []
        unit.callFiles = []
    }

    /// A unit's line rows where the place changes and its scope range bounds, ascending (indexing the unit whole).
    private func answerBounds(of unit: Unit) -> [UInt64] {
        if unit.lines == nil { loadLines(unit) }
        if unit.index == nil { unit.index = UnitIndex(unitDie: unit.die, scanner: namesScanner(of: unit)) }
        var rows: [UInt64] = []
        if let lines = unit.lines { lines.appendPlaceChanges(to: &rows) }
        var scopes: [UInt64] = []
        if let index = unit.index {
            index.readAllTrees()
            scopes.reserveCapacity(2 * index.ranges.count)
            for span in index.ranges {
                scopes.append(span.low)
                scopes.append(span.high)
            }
        }
        // The rows come in address order (both line readers keep them sorted): only the scopes' bounds need
        // sorting, and one merge joins the two (with the windows' merges, 111 M instructions on swift-format
        // against 130 M sorting everything: callgrind).
        AnswerBoundWalk.sortSmallOrLarge(&scopes)
        return Self.merged(rows, scopes)
    }

    /// The values of `ascending` and of `sorted` (ascending), ascending. Should `ascending` not be, the two are
    /// sorted together.
    static func merged(_ ascending: [UInt64], _ sorted: [UInt64]) -> [UInt64] {
        let total = ascending.count + sorted.count
        let isAscending = ascending.withUnsafeBufferPointer { values in
            values.indices.dropFirst().allSatisfy { values[$0 &- 1] <= values[$0] }
        }
        guard isAscending else {
            var together = ascending + sorted
            AnswerBoundWalk.sortSmallOrLarge(&together)
            return together
        }
        return [UInt64](unsafeUninitializedCapacity: total) { all, count in
            ascending.withUnsafeBufferPointer { first in
                sorted.withUnsafeBufferPointer { second in
                    var one = 0
                    var two = 0
                    var out = 0
                    while one < first.count && two < second.count {
                        if second[two] < first[one] {
                            all[out] = second[two]
                            two &+= 1
                        } else {
                            all[out] = first[one]
                            one &+= 1
                        }
                        out &+= 1
                    }
                    while one < first.count {
                        all[out] = first[one]
                        one &+= 1
                        out &+= 1
                    }
                    while two < second.count {
                        all[out] = second[two]
                        two &+= 1
                        out &+= 1
                    }
                }
            }
            count = total
        }
    }
}
