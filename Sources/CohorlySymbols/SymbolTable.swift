import CDwarf

#if canImport(Glibc)
    import Glibc
#endif

/// Function symbols from `.symtab` (or `.dynsym` when there is no `.symtab`), sorted by address: the fallback
/// when there is no DWARF for an address. A class, so reaching it from the symbolicator copies no arrays.
///
/// Kept small, as parallel arrays of 20 bytes a function: the address, the length covered, and the name and
/// source file as offsets into the string table (which stays in the mapped file). The symbol entries are read
/// with `pread`, a block at a time, not through the file's mapping: read once, their pages would otherwise
/// stay resident for the whole run (3.6 MB of `.symtab` for the 150,000 symbols of a statically linked CLI).
final class SymbolTable {
    /// Start addresses, ascending (one symbol per address).
    @exclusivity(unchecked) private(set) var addresses: [UInt64] = []
    /// Per symbol: how far it covers past its address (see ``end(at:)``); `UInt32.max`: see `longEnds`.
    @exclusivity(unchecked) private var lengths: [UInt32] = []
    /// The ends of the (rare) symbols covering `UInt32.max` bytes or more, by position.
    private var longEnds: [Int: UInt64] = [:]
    /// Where the last lookup ended: a batch looks its addresses up in ascending order, so the next answer is
    /// usually a few symbols on.
    @exclusivity(unchecked) private var hint = 0
    /// Per symbol: its name's offset in the string table.
    @exclusivity(unchecked) private var names: [UInt32] = []
    /// Per symbol: the offset of the source file named by the `STT_FILE` symbol before a local symbol (as
    /// llvm-symbolizer reports it), `UInt32.max` for none.
    @exclusivity(unchecked) private var files: [UInt32] = []
    /// The string table's bytes in the mapped file (names are NUL-terminated there: checked by `elf_strptr`).
    private var strings: UnsafePointer<CChar>?
    /// The file the names point into.
    let file: ElfFile

    /// A symbol as read from the table, before sorting.
    private struct Entry {
        var address: UInt64
        var size: UInt64
        var end: UInt64
        var name: UInt32
        var file: UInt32
    }

    init(file: ElfFile) {
        self.file = file
        let sections = file.sections()
        let preferred =
            sections.first { $0.header.sh_type == UInt32(SHT_SYMTAB) }
            ?? sections.first { $0.header.sh_type == UInt32(SHT_DYNSYM) }
        guard let section = preferred, section.header.sh_entsize > 0,
            let strings = elf_strptr(file.elf, Int(section.header.sh_link), 0)
        else { return }
        self.strings = UnsafePointer(strings)
        // A string table ending in NUL (as every linker writes it) holds a NUL-terminated name at each offset
        // below its size: checked once here, not per symbol by `elf_strptr` (which scans each name for its end).
        let stringsData = elf_getdata(elf_getscn(file.elf, Int(section.header.sh_link)), nil)?.pointee
        let checkedSize: Int? =
            if let stringsData, stringsData.d_buf == UnsafeMutableRawPointer(strings), stringsData.d_size > 0,
                stringsData.d_buf.load(fromByteOffset: stringsData.d_size - 1, as: UInt8.self) == 0
            { stringsData.d_size } else { nil }
        // Section index → end address, for sizeless symbols.
        var sectionEnds: [Int: UInt64] = [:]
        for section in sections where section.header.sh_flags & UInt64(SHF_ALLOC) != 0 {
            let (end, overflow) = section.header.sh_addr.addingReportingOverflow(section.header.sh_size)
            sectionEnds[elf_ndxscn(section.scn)] = overflow ? UInt64.max : end
        }
        /// The offset of a name in the string table, or nil when it is not a NUL-terminated string there.
        func nameOffset(_ offset: UInt32) -> UInt32? {
            if let checkedSize { return Int(offset) < checkedSize ? offset : nil }
            return elf_strptr(file.elf, Int(section.header.sh_link), Int(offset)) != nil ? offset : nil
        }
        var functions = 0
        Self.forEachSymbol(file, section.header) { symbol in
            let type = Int32(symbol.st_info & 0xf)
            if type == STT_FUNC || type == STT_GNU_IFUNC { functions += 1 }
        }
        var found: [Entry] = []
        found.reserveCapacity(functions)
        var currentFile = UInt32.max
        Self.forEachSymbol(file, section.header) { symbol in
            let type = Int32(symbol.st_info & 0xf)
            if type == STT_FILE {
                currentFile = nameOffset(symbol.st_name) ?? UInt32.max
                return
            }
            let isLocal = Int32(symbol.st_info >> 4) == STB_LOCAL
            guard type == STT_FUNC || type == STT_GNU_IFUNC, symbol.st_shndx != UInt16(SHN_UNDEF),
                symbol.st_value != 0, let name = nameOffset(symbol.st_name)
            else { return }
            let end: UInt64
            if symbol.st_size > 0 {
                let (sum, overflow) = symbol.st_value.addingReportingOverflow(symbol.st_size)
                end = overflow ? UInt64.max : sum
            } else {
                // A sizeless symbol outside any known section covers its own address only.
                end = sectionEnds[Int(symbol.st_shndx)] ?? symbol.st_value &+ 1
            }
            found.append(
                Entry(
                    address: symbol.st_value, size: symbol.st_size, end: end, name: name,
                    file: isLocal ? currentFile : UInt32.max))
        }
        // Like llvm-symbolizer: of the symbols at one address, keep the last in (size, position in the table)
        // order, so a sized symbol wins over a sizeless alias, and among equal aliases the later one in the
        // table. The order is sorted as positions (4 bytes each), not as copies of the symbols, by address only
        // (stable: equal addresses stay in table order), and each address's keeper picked in one pass.
        var order = (0..<Int32(clamping: found.count)).map { $0 }
        found.withUnsafeBufferPointer { found in RadixOrder.sort(&order) { found[Int($0)].address } }
        var unique = 0
        for position in order {
            if unique > 0 {
                let kept = found[Int(order[unique - 1])]
                if kept.address == found[Int(position)].address {
                    if found[Int(position)].size < kept.size { continue }
                    unique -= 1
                }
            }
            order[unique] = position  // unique ≤ the position read: compacting in place
            unique += 1
        }
        addresses.reserveCapacity(unique)
        lengths.reserveCapacity(unique)
        names.reserveCapacity(unique)
        files.reserveCapacity(unique)
        for position in order[..<unique] {
            let entry = found[Int(position)]
            // An end before the address (a sizeless symbol outside its section's range) covers nothing.
            let length = entry.end > entry.address ? entry.end - entry.address : 0
            if length >= UInt64(UInt32.max) {
                longEnds[addresses.count] = entry.end
                lengths.append(UInt32.max)
            } else {
                lengths.append(UInt32(truncatingIfNeeded: length))
            }
            addresses.append(entry.address)
            names.append(entry.name)
            files.append(entry.file)
        }
    }

    /// The address of the global function `main` (a program's entry from the C runtime) in `file`'s `.symtab`,
    /// found by reading the entries only (no table built: for the 64 MB debug test binary, 87,000 symbols, 16 ms
    /// against 156 ms for the table, on a loaded 2-core machine). The table itself cannot answer: of the symbols at
    /// one address it keeps one, and `main` shares its address with SwiftPM's `<Module>_main`.
    static func mainAddress(in file: ElfFile) -> UInt64? {
        guard let section = file.sections().first(where: { $0.header.sh_type == UInt32(SHT_SYMTAB) }),
            section.header.sh_entsize > 0, let strings = elf_strptr(file.elf, Int(section.header.sh_link), 0),
            let data = elf_getdata(elf_getscn(file.elf, Int(section.header.sh_link)), nil)?.pointee,
            data.d_buf == UnsafeMutableRawPointer(strings)
        else { return nil }
        let size = data.d_size
        var found: UInt64?
        forEachSymbol(file, section.header) { symbol in
            guard found == nil, Int32(symbol.st_info & 0xf) == STT_FUNC, Int32(symbol.st_info >> 4) != STB_LOCAL,
                symbol.st_shndx != UInt16(SHN_UNDEF), Int(symbol.st_name) + 4 < size
            else { return }
            // "main\0", compared in place (the name's 5 bytes lie inside the string table).
            let name = UnsafeRawPointer(strings + Int(symbol.st_name)).assumingMemoryBound(to: UInt8.self)
            if name[0] == 0x6d, name[1] == 0x61, name[2] == 0x69, name[3] == 0x6e, name[4] == 0 {
                found = symbol.st_value
            }
        }
        return found
    }

    /// Calls `body` with each entry of the symbol table `header` describes, read from the file with `pread` in
    /// blocks and, when the file's byte order is not the host's, converted (stops at the first block that
    /// cannot be read).
    private static func forEachSymbol(_ file: ElfFile, _ header: GElf_Shdr, _ body: (GElf_Sym) -> Void) {
        let isWide = file.header.e_ident.4 == UInt8(ELFCLASS64)
        let entrySize = isWide ? MemoryLayout<Elf64_Sym>.size : MemoryLayout<Elf32_Sym>.size
        let total = header.sh_size / UInt64(entrySize)
        let perBlock = 2048
        let isHostOrder = file.header.e_ident.5 == UInt8(UInt16(1).littleEndian == 1 ? ELFDATA2LSB : ELFDATA2MSB)
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: perBlock * entrySize, alignment: 8)
        let native = UnsafeMutableRawBufferPointer.allocate(
            byteCount: isHostOrder ? 0 : perBlock * entrySize, alignment: 8)
        defer {
            raw.deallocate()
            native.deallocate()
        }
        var done: UInt64 = 0
        while done < total {
            let count = Int(min(UInt64(perBlock), total - done))
            let (offset, overflow) = header.sh_offset.addingReportingOverflow(done * UInt64(entrySize))
            let block = UnsafeMutableRawBufferPointer(rebasing: raw[..<(count * entrySize)])
            guard !overflow, file.read(at: offset, into: block) else { return }
            // In the host's byte order already (the usual case): read where they are, no copy converted.
            let entries = isHostOrder ? raw : native
            if !isHostOrder {
                guard convert(block, into: native) else { return }
            }
            for index in 0..<count {
                if isWide {
                    body(entries.load(fromByteOffset: index * entrySize, as: Elf64_Sym.self))
                } else {
                    let symbol = entries.load(fromByteOffset: index * entrySize, as: Elf32_Sym.self)
                    body(
                        GElf_Sym(
                            st_name: symbol.st_name, st_info: symbol.st_info, st_other: symbol.st_other,
                            st_shndx: symbol.st_shndx, st_value: UInt64(symbol.st_value),
                            st_size: UInt64(symbol.st_size)))
                }
            }
            done += UInt64(count)
        }

        /// `block`'s entries converted to the host's byte order into `native` (libelf's conversion).
        func convert(_ block: UnsafeMutableRawBufferPointer, into native: UnsafeMutableRawBufferPointer) -> Bool {
            var source = Elf_Data()
            source.d_buf = UnsafeMutableRawPointer(block.baseAddress)
            source.d_type = ELF_T_SYM
            source.d_size = block.count
            source.d_version = UInt32(EV_CURRENT)
            var target = Elf_Data()
            target.d_buf = native.baseAddress
            target.d_type = ELF_T_SYM
            target.d_size = native.count
            target.d_version = UInt32(EV_CURRENT)
            return gelf_xlatetom(file.elf, &target, &source, UInt32(file.header.e_ident.5)) != nil
        }
    }

    /// How many functions the table holds.
    var count: Int { addresses.count }

    /// The first address past what the symbol at `position` may cover: `address + size`, or for a sizeless
    /// symbol the end of its section (never an address past its section, however far the next symbol is).
    func end(at position: Int) -> UInt64 {
        let length = lengths[position]
        if length == UInt32.max, let end = longEnds[position] { return end }
        return addresses[position] &+ UInt64(length)
    }

    /// The name of the symbol at `position`, NUL-terminated in the mapped file (alive as long as `file`; nil
    /// only for a table without strings, which holds no symbols).
    func name(at position: Int) -> UnsafePointer<CChar>? {
        strings.map { $0 + Int(names[position]) }
    }

    /// The source file of the local symbol at `position` (see `files`), or nil.
    func file(at position: Int) -> UnsafePointer<CChar>? {
        let offset = files[position]
        guard offset != UInt32.max, let strings else { return nil }
        return strings + Int(offset)
    }

    /// The position of the symbol containing `address` (a sizeless symbol covers up to the next symbol or the
    /// end of its section, whichever comes first).
    func lookup(_ address: UInt64) -> Int? {
        let low = positionAfter(address)
        guard low > 0 else { return nil }
        let position = low - 1
        let length = lengths[position]
        if length == UInt32.max { return address < end(at: position) ? position : nil }
        return address - addresses[position] < UInt64(length) ? position : nil
    }

    /// The position of the first symbol above `address`: galloping from the last lookup's answer when `address`
    /// is past it (then a search of a few neighbouring entries), else a binary search of the whole table.
    private func positionAfter(_ address: UInt64) -> Int {
        var range = 0..<addresses.count
        if hint < addresses.count && addresses[hint] <= address {
            var step = 1
            var low = hint + 1
            var probe = hint + 1
            while probe < addresses.count && addresses[probe] <= address {
                low = probe + 1
                step *= 2
                probe = hint + step
            }
            range = low..<min(probe, addresses.count)
        }
        let found = partitionPoint(range) { addresses[$0] <= address }
        hint = max(found - 1, 0)
        return found
    }
}
