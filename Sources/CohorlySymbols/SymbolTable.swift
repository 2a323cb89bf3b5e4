import CDwarf

/// Function symbols from `.symtab` (or `.dynsym` when there is no `.symtab`), sorted by address: the fallback
/// when there is no DWARF for an address. A class, so reaching it from the symbolicator copies no arrays.
final class SymbolTable {
    struct Symbol {
        let address: UInt64
        let size: UInt64
        /// The first address past what the symbol may cover: `address + size`, or for a sizeless symbol the end
        /// of its section (never an address past its section, however far the next symbol is).
        let end: UInt64
        /// The name's bytes in the file's string table (alive as long as `file`).
        let name: UnsafePointer<CChar>
        /// The source file named by the `STT_FILE` symbol before a local symbol (as llvm-symbolizer reports it).
        let file: UnsafePointer<CChar>?
    }

    private(set) var symbols: [Symbol] = []
    /// The file the names point into.
    let file: ElfFile

    init(file: ElfFile) {
        self.file = file
        let sections = file.sections()
        let preferred =
            sections.first { $0.header.sh_type == UInt32(SHT_SYMTAB) }
            ?? sections.first { $0.header.sh_type == UInt32(SHT_DYNSYM) }
        guard let section = preferred, section.header.sh_entsize > 0,
            let data = elf_getdata(section.scn, nil)
        else { return }
        let count = Int(
            clamping: min(section.header.sh_size / section.header.sh_entsize, UInt64(Int32.max)))
        // Section index → end address, for sizeless symbols.
        var sectionEnds: [Int: UInt64] = [:]
        for section in sections where section.header.sh_flags & UInt64(SHF_ALLOC) != 0 {
            let (end, overflow) = section.header.sh_addr.addingReportingOverflow(section.header.sh_size)
            sectionEnds[elf_ndxscn(section.scn)] = overflow ? UInt64.max : end
        }
        var found: [Symbol] = []
        found.reserveCapacity(Self.functionCount(data, count))
        var currentFile: UnsafePointer<CChar>?
        for index in 0..<count {
            var sym = GElf_Sym()
            guard gelf_getsym(data, Int32(index), &sym) != nil else { break }
            let type = Int32(sym.st_info & 0xf)
            if type == STT_FILE {
                currentFile = elf_strptr(file.elf, Int(section.header.sh_link), Int(sym.st_name))
                    .map { UnsafePointer($0) }
                continue
            }
            let isLocal = Int32(sym.st_info >> 4) == STB_LOCAL
            guard type == STT_FUNC || type == STT_GNU_IFUNC, sym.st_shndx != UInt16(SHN_UNDEF),
                sym.st_value != 0
            else { continue }
            guard let name = elf_strptr(file.elf, Int(section.header.sh_link), Int(sym.st_name)) else {
                continue
            }
            let end: UInt64
            if sym.st_size > 0 {
                let (sum, overflow) = sym.st_value.addingReportingOverflow(sym.st_size)
                end = overflow ? UInt64.max : sum
            } else {
                // A sizeless symbol outside any known section covers its own address only.
                end = sectionEnds[Int(sym.st_shndx)] ?? sym.st_value &+ 1
            }
            found.append(
                Symbol(
                    address: sym.st_value, size: sym.st_size, end: end, name: UnsafePointer(name),
                    file: isLocal ? currentFile : nil))
        }
        // Like llvm-symbolizer: sort by (address, size), stable, and keep the last of each address, so a sized
        // symbol wins over a sizeless alias, and among equal aliases the later one in the table. The order is
        // sorted as positions (4 bytes each), not as copies of the symbols.
        var order = (0..<Int32(clamping: found.count)).map { $0 }
        order.sort {
            let (left, right) = (found[Int($0)], found[Int($1)])
            return (left.address, left.size, $0) < (right.address, right.size, $1)
        }
        var unique = 0
        for position in order {
            if unique > 0 && found[Int(order[unique - 1])].address == found[Int(position)].address { unique -= 1 }
            order[unique] = position  // unique ≤ the position read: compacting in place
            unique += 1
        }
        symbols.reserveCapacity(unique)
        for position in order[..<unique] { symbols.append(found[Int(position)]) }
    }

    /// How many of the table's `count` symbols are functions (an upper bound of what is kept).
    private static func functionCount(_ data: UnsafeMutablePointer<Elf_Data>, _ count: Int) -> Int {
        var functions = 0
        for index in 0..<count {
            var sym = GElf_Sym()
            guard gelf_getsym(data, Int32(index), &sym) != nil else { break }
            let type = Int32(sym.st_info & 0xf)
            if type == STT_FUNC || type == STT_GNU_IFUNC { functions += 1 }
        }
        return functions
    }

    /// The position in ``symbols`` of the symbol containing `address` (a sizeless symbol covers up to the next
    /// symbol or the end of its section, whichever comes first).
    func lookup(_ address: UInt64) -> Int? {
        let low = partitionPoint(0..<symbols.count) { symbols[$0].address <= address }
        guard low > 0 else { return nil }
        return address < symbols[low - 1].end ? low - 1 : nil
    }
}
