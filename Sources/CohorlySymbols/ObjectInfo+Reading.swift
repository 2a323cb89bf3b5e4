import CDwarf

extension ObjectInfo {
    /// The GNU build id: `PT_NOTE` segments first, then `SHT_NOTE` sections (libdwelf's order).
    static func readBuildId(_ file: ElfFile) -> [UInt8]? {
        var pointer: UnsafeRawPointer?
        let length = dwelf_elf_gnu_build_id(file.elf, &pointer)
        guard length > 0, let pointer else { return nil }
        return Array(UnsafeRawBufferPointer(start: pointer, count: length))
    }

    /// `.gnu_debuglink` name and CRC.
    static func readDebugLink(_ file: ElfFile) -> DebugLink? {
        var crc: GElf_Word = 0
        guard let name = dwelf_elf_gnu_debuglink(file.elf, &crc) else { return nil }
        return DebugLink(name: String(cString: name), crc: crc)
    }

    /// The compression of a debug section, or nil when it is stored plainly.
    static func compression(of section: ElfFile.Section) -> Compression? {
        if section.header.sh_flags & cly_shf_compressed != 0 {
            var chdr = GElf_Chdr()
            guard gelf_getchdr(section.scn, &chdr) != nil else { return .unknown }
            switch chdr.ch_type {
            case cly_elfcompress_zlib: return .zlib
            case 2: return .zstd  // ELFCOMPRESS_ZSTD, unknown to elfutils 0.188
            default: return .unknown
            }
        }
        if section.name.hasPrefix(".zdebug") { return .zlibGNU }
        return nil
    }

    /// Whether one of the first unit headers of `.debug_info` is a DWARF 5 skeleton or split unit (split
    /// DWARF: the debug info proper lives in `.dwo`/`.dwp` files). Reads only the headers.
    static func hasSkeletonUnits(_ file: ElfFile, section: GElf_Shdr, littleEndian: Bool) -> Bool {
        var offset: UInt64 = 0
        for _ in 0..<8 {
            let (position, overflow) = section.sh_offset.addingReportingOverflow(offset)
            guard section.sh_size >= 16, offset <= section.sh_size - 16, !overflow,
                position <= UInt64(Int64.max),
                let chunk = elf_getdata_rawchunk(file.elf, Int64(position), 16, ELF_T_BYTE),
                let base = chunk.pointee.d_buf
            else { return false }
            let bytes = UnsafeRawBufferPointer(start: base, count: 16)
            func integer(_ at: Int, _ size: Int) -> UInt64 {
                var value: UInt64 = 0
                for index in 0..<size {
                    let byte = UInt64(bytes[littleEndian ? at + size - 1 - index : at + index])
                    value = value << 8 | byte
                }
                return value
            }
            var length = integer(0, 4)
            var header = 4
            if length == 0xffff_ffff {
                length = integer(4, 8)
                header = 12
            }
            let version = integer(header, 2)
            if version == 5 {
                let unitType = integer(header + 2, 1)
                if unitType == UInt64(DW_UT_skeleton) || unitType == UInt64(DW_UT_split_compile) {
                    return true
                }
            }
            guard length > 0 else { return false }
            let (next, wrapped) = offset.addingReportingOverflow(length)
            guard !wrapped, next < UInt64.max - 12 else { return false }
            offset = next + UInt64(header)
        }
        return false
    }

    static func kind(file: ElfFile, header: GElf_Ehdr, hasCode: Bool, hasSections: Bool) -> Kind {
        switch Int32(header.e_type) {
        case ET_REL: return .relocatable
        case ET_CORE: return .core
        case ET_EXEC, ET_DYN:
            if hasSections && !hasCode { return .debugCompanion }
            if Int32(header.e_type) == ET_EXEC { return .executable }
            return isPositionIndependentExecutable(file) ? .executable : .sharedLibrary
        default: return .other
        }
    }

    /// A PIE has `DF_1_PIE`, or (older linkers such as gold) an interpreter and no `DT_SONAME`.
    private static func isPositionIndependentExecutable(_ file: ElfFile) -> Bool {
        let phdrs = file.programHeaders()
        let hasInterpreter = phdrs.contains { $0.p_type == UInt32(PT_INTERP) }
        // The dynamic section is small; a huge size or offset is a broken file, read as "no dynamic section".
        guard let dynamic = phdrs.first(where: { $0.p_type == UInt32(PT_DYNAMIC) }),
            dynamic.p_offset <= UInt64(Int64.max), dynamic.p_filesz <= 1 << 20,
            let data = elf_getdata_rawchunk(
                file.elf, Int64(dynamic.p_offset), Int(dynamic.p_filesz), ELF_T_DYN)
        else { return hasInterpreter }
        let entrySize = file.header.e_ident.4 == UInt8(ELFCLASS64) ? 16 : 8
        var hasSoname = false
        for index in 0..<(Int(dynamic.p_filesz) / entrySize) {
            var entry = GElf_Dyn()
            guard gelf_getdyn(data, Int32(index), &entry) != nil else { break }
            if entry.d_tag == Int64(DT_NULL) { break }
            if entry.d_tag == Int64(DT_FLAGS_1) && entry.d_un.d_val & UInt64(DF_1_PIE) != 0 {
                return true
            }
            if entry.d_tag == Int64(DT_SONAME) { hasSoname = true }
        }
        return hasInterpreter && !hasSoname
    }

    static func archName(machine: UInt16, is64: Bool) -> String {
        switch Int32(machine) {
        case EM_X86_64: return "x86_64"
        case EM_386: return "x86"
        case EM_AARCH64: return "arm64"
        case EM_ARM: return "arm"
        case EM_RISCV: return is64 ? "riscv64" : "riscv32"
        case EM_PPC64: return "ppc64"
        case EM_PPC: return "ppc"
        case EM_S390: return is64 ? "s390x" : "s390"
        case EM_MIPS: return is64 ? "mips64" : "mips"
        default: return "unknown(\(machine))"
        }
    }
}
