import CDwarf

#if canImport(Glibc)
    import Glibc
#endif

/// Address → compile unit → scopes and line rows, for one DWARF file. Unit ranges come from each unit's own
/// `DW_AT_ranges`/`low_pc` (Swift and clang emit no `.debug_aranges`, which libdw's lookups need); a unit's
/// scopes are indexed on first use and kept, so a batch of addresses pays for each unit once.
final class DwarfIndex {
    private let file: ElfFile
    private let dwarf: OpaquePointer
    private var units: [Unit] = []
    /// Unit ranges sorted by `low`; `maxHigh[i]` is the largest `high` in `unitRanges[0...i]`.
    private var unitRanges: [UnitIndex.Range] = []
    private var maxHigh: [UInt64] = []
    private var names: [UInt64: FunctionName?] = [:]

    private final class Unit {
        var die: Dwarf_Die
        var version: Int = 4
        var index: UnitIndex?
        var lines: LineTable?
        var files: OpaquePointer?
        var filesLoaded = false
        var fileNames: [Int: String] = [:]
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

    /// Opens the DWARF of `file`; throws when there is none or it cannot be read (e.g. zstd sections).
    init(file: ElfFile) throws(SymbolsError) {
        self.file = file
        guard let dwarf = dwarf_begin_elf(file.elf, DWARF_C_READ, nil) else {
            throw .unreadableDebugInfo(path: file.path, reason: DwarfIndex.lastError())
        }
        self.dwarf = dwarf
        var cu: OpaquePointer?
        var next: OpaquePointer?
        var version: Dwarf_Half = 0
        var unitType: UInt8 = 0
        var unitDie = Dwarf_Die()
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
            var ranges = DwarfRanges.of(&unitDie)
            if ranges.isEmpty {
                // No unit ranges: index now and use its functions' ranges.
                let index = UnitIndex(
                    unitDie: unitDie,
                    scanner: scanner(unitDie, version: Int(version)))
                unit.index = index
                ranges = index.functionRanges
            }
            for range in ranges {
                unitRanges.append(.init(low: range.low, high: range.high, scope: number))
            }
        }
        unitRanges.sort { $0.low < $1.low }
        var running: UInt64 = 0
        maxHigh = unitRanges.map {
            running = max(running, $0.high)
            return running
        }
    }

    deinit {
        dwarf_end(dwarf)
    }

    /// The linear-pass scanner for a unit (little-endian files only: it reads block lengths itself).
    private func scanner(_ unitDie: Dwarf_Die, version: Int) -> DieScanner? {
        guard file.header.e_ident.5 == UInt8(ELFDATA2LSB), let bounds = debugInfoBounds else { return nil }
        return DieScanner(dwarf: dwarf, unitDie: unitDie, version: version, section: bounds)
    }

    /// Where `.debug_info`'s bytes are in memory (after libdw decompressed it), so a unit whose header claims
    /// more than the section holds cannot send the linear pass past it (found by the symbolicator fuzzer).
    private lazy var debugInfoBounds: DieScanner.Bounds? = {
        var names = 0
        guard elf_getshdrstrndx(file.elf, &names) == 0 else { return nil }
        var scn = elf_nextscn(file.elf, nil)
        while let current = scn {
            var shdr = GElf_Shdr()
            if gelf_getshdr(current, &shdr) != nil, let name = elf_strptr(file.elf, names, Int(shdr.sh_name)),
                strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0
            {
                guard let data = elf_getdata(current, nil), let start = data.pointee.d_buf else { return nil }
                let base = UnsafePointer<UInt8>(start.assumingMemoryBound(to: UInt8.self))
                return DieScanner.Bounds(start: base, end: base + Int(data.pointee.d_size))
            }
            scn = elf_nextscn(file.elf, current)
        }
        return nil
    }()

    static func lastError() -> String {
        guard let message = dwarf_errmsg(-1) else { return "unknown libdw error" }
        return String(cString: message)
    }

    /// Whether any unit has code.
    var isEmpty: Bool { unitRanges.isEmpty }

    /// A resolved scope of the inline chain.
    /// A function's name as stored (linkage name when there is one) and demangled.
    struct FunctionName {
        var raw: String
        var readable: String
    }

    struct ChainEntry {
        var name: FunctionName?
        var callFile: String?
        var callLine: Int
        var callColumn: Int
    }

    /// Frames for `address`: the chain innermost first plus the line row, or nil when no unit covers it.
    func lookup(_ address: UInt64) -> (chain: [ChainEntry], file: String?, line: Int, column: Int)? {
        guard let unit = unit(containing: address) else { return nil }
        if unit.index == nil {
            unit.index = UnitIndex(
                unitDie: unit.die,
                scanner: scanner(unit.die, version: unit.version))
        }
        guard let index = unit.index else { return nil }
        var chain: [ChainEntry] = []
        for scopeIndex in index.chain(at: address) {
            let scope = index.scopes[Int(scopeIndex)]
            chain.append(
                ChainEntry(
                    name: name(at: scope.dieOffset),
                    callFile: scope.parent >= 0 ? fileName(unit, Int(scope.callFile)) : nil,
                    callLine: Int(scope.callLine), callColumn: Int(scope.callColumn)))
        }
        if unit.lines == nil { unit.lines = LineTable(unitDie: unit.die) { absolute(unit, $0) } }
        var line = 0
        var column = 0
        var path: String?
        if let table = unit.lines, let row = table.row(at: address) {
            line = Int(row.line)
            column = Int(row.column)
            path = table.path(of: row)
        }
        return (chain, path, line, column)
    }

    private func unit(containing address: UInt64) -> Unit? {
        var low = 0
        var high = unitRanges.count
        while low < high {
            let mid = (low + high) / 2
            if unitRanges[mid].low <= address { low = mid + 1 } else { high = mid }
        }
        var index = low - 1
        while index >= 0 && maxHigh[index] > address {
            if unitRanges[index].high > address { return units[Int(unitRanges[index].scope)] }
            index -= 1
        }
        return nil
    }

    private func name(at offset: UInt64) -> FunctionName? {
        if let cached = names[offset] { return cached }
        var die = Dwarf_Die()
        var result: FunctionName?
        if dwarf_offdie(dwarf, offset, &die) != nil, let raw = DwarfAttributes.functionName(&die) {
            result = FunctionName(raw: raw, readable: Demangler.demangle(raw))
        }
        names[offset] = .some(result)
        return result
    }

    private func fileName(_ unit: Unit, _ index: Int) -> String? {
        if let cached = unit.fileNames[index] { return cached }
        if !unit.filesLoaded {
            unit.filesLoaded = true
            var files: OpaquePointer?
            var count = 0
            if dwarf_getsrcfiles(&unit.die, &files, &count) == 0 { unit.files = files }
        }
        guard let files = unit.files, let name = dwarf_filesrc(files, index, nil, nil) else {
            return nil
        }
        let result = absolute(unit, String(cString: name))
        unit.fileNames[index] = result
        return result
    }

    private func absolute(_ unit: Unit, _ path: String) -> String {
        if !path.hasPrefix("/"), let directory = unit.compilationDirectory, !directory.isEmpty {
            return DwarfIndex.normalize(directory + "/" + path)
        }
        return DwarfIndex.normalize(path)
    }

    /// libdw joins a directory ending in `/` and a name with another `/` (`//<compiler-generated>`).
    static func normalize(_ path: String) -> String {
        guard path.contains("//") else { return path }
        var result = ""
        var previousSlash = false
        for char in path {
            if char == "/" && previousSlash { continue }
            previousSlash = char == "/"
            result.append(char)
        }
        return result
    }

    /// For tests: indexes every unit both ways (linear pass and libdw's walk) and reports, per unit, whether
    /// the linear pass was used and whether both found the same scopes and ranges.
    func compareWalks() -> [(linear: Bool, same: Bool)] {
        units.map { unit in
            let linear = UnitIndex(
                unitDie: unit.die,
                scanner: scanner(unit.die, version: unit.version))
            let walked = UnitIndex(unitDie: unit.die, scanner: nil)
            let same =
                linear.scopes.map(\.dieOffset) == walked.scopes.map(\.dieOffset)
                && linear.scopes.map(\.parent) == walked.scopes.map(\.parent)
                && linear.ranges.map { [$0.low, $0.high, UInt64($0.scope)] }
                    == walked.ranges.map { [$0.low, $0.high, UInt64($0.scope)] }
            return (linear.usedLinearWalk, same)
        }
    }
}
