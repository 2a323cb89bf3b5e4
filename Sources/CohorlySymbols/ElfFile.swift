import CDwarf

#if canImport(Glibc)
    import Glibc
#endif

/// An open ELF file (libelf, read-only, memory-mapped), opened as a ``RegularFile`` (a FIFO or device is
/// refused without blocking). Closes the descriptor when released.
final class ElfFile {
    let path: String
    let elf: OpaquePointer
    private let file: RegularFile
    /// Decompressed section contents libelf hands out in place of the stored ones (see
    /// ``decompressZstdSections()``), freed after libelf is done with the file.
    var decompressedSections: [UnsafeMutableRawPointer] = []

    /// Opens `path`. `mapped` maps the whole file (best when most of it will be read, as DWARF is);
    /// otherwise libelf reads only the parts asked for (best for headers and notes).
    init(path: String, mapped: Bool = true) throws(SymbolsError) {
        self.path = path
        _ = ElfFile.libelfReady
        let file = try RegularFile(path: path)
        guard file.size > 0 else { throw .emptyFile(path: path) }
        let fd = file.descriptor
        var magic = [UInt8](repeating: 0, count: 4)
        let got = pread(fd, &magic, 4, 0)
        guard got == 4, magic == [0x7f, 0x45, 0x4c, 0x46] else { throw .notELF(path: path) }
        guard let elf = elf_begin(fd, mapped ? ELF_C_READ_MMAP : ELF_C_READ, nil) else {
            throw .malformed(path: path, reason: ElfFile.lastError())
        }
        var ehdr = GElf_Ehdr()
        guard elf_kind(elf) == ELF_K_ELF, gelf_getehdr(elf, &ehdr) != nil else {
            let reason = ElfFile.lastError()
            elf_end(elf)
            throw .malformed(path: path, reason: reason)
        }
        if let reason = ElfFile.truncation(elf: elf, header: ehdr, size: file.size) {
            elf_end(elf)
            throw .malformed(path: path, reason: reason)
        }
        self.file = file
        self.elf = elf
        self.header = ehdr
    }

    deinit {
        elf_end(elf)
        decompressedSections.forEach { free($0) }
    }  // then `file` closes the descriptor

    /// The ELF header.
    let header: GElf_Ehdr

    /// Why the file is cut short (headers or section contents past its end), or nil when it is whole.
    private static func truncation(elf: OpaquePointer, header: GElf_Ehdr, size: UInt64) -> String? {
        // Every offset and size comes from the file: add them without trapping on overflow.
        func end(_ start: UInt64, _ length: UInt64) -> String {
            let (sum, overflow) = start.addingReportingOverflow(length)
            return overflow ? "beyond 2^64" : String(sum)
        }
        func fits(_ start: UInt64, _ length: UInt64) -> Bool {
            let (sum, overflow) = start.addingReportingOverflow(length)
            return !overflow && sum <= size
        }
        let programSize = UInt64(header.e_phnum) * UInt64(header.e_phentsize)
        if header.e_phnum > 0 && !fits(header.e_phoff, programSize) {
            return
                "truncated: program headers end at \(end(header.e_phoff, programSize)), file has \(size) bytes"
        }
        let sectionSize = UInt64(max(header.e_shnum, 1)) * UInt64(header.e_shentsize)
        if header.e_shoff != 0 && !fits(header.e_shoff, sectionSize) {
            return
                "truncated: section headers end at \(end(header.e_shoff, sectionSize)), file has \(size) bytes"
        }
        var scn = elf_nextscn(elf, nil)
        while let current = scn {
            var shdr = GElf_Shdr()
            if gelf_getshdr(current, &shdr) != nil && shdr.sh_type != UInt32(SHT_NOBITS)
                && !fits(shdr.sh_offset, shdr.sh_size)
            {
                return
                    "truncated: a section ends at \(end(shdr.sh_offset, shdr.sh_size)), file has \(size) bytes"
            }
            scn = elf_nextscn(elf, current)
        }
        return nil
    }

    /// libelf's last error as text.
    static func lastError() -> String {
        guard let message = elf_errmsg(-1) else { return "unknown libelf error" }
        return String(cString: message)
    }

    /// `elf_version` must be called once before any other libelf call.
    private static let libelfReady: Bool = {
        elf_version(UInt32(EV_CURRENT)) != UInt32(EV_NONE)
    }()

    /// Program headers, in file order (empty when unreadable).
    func programHeaders() -> [GElf_Phdr] {
        var count = 0
        guard elf_getphdrnum(elf, &count) == 0 else { return [] }
        var result: [GElf_Phdr] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            var phdr = GElf_Phdr()
            if gelf_getphdr(elf, Int32(index), &phdr) != nil { result.append(phdr) }
        }
        return result
    }

    /// A section with its header and name.
    struct Section {
        let scn: OpaquePointer
        let header: GElf_Shdr
        let name: String
    }

    /// All sections with readable headers and names.
    func sections() -> [Section] {
        var stringIndex = 0
        guard elf_getshdrstrndx(elf, &stringIndex) == 0 else { return [] }
        var result: [Section] = []
        var scn = elf_nextscn(elf, nil)
        while let current = scn {
            var shdr = GElf_Shdr()
            if gelf_getshdr(current, &shdr) != nil {
                let name = elf_strptr(elf, stringIndex, Int(shdr.sh_name)).map { String(cString: $0) } ?? ""
                result.append(Section(scn: current, header: shdr, name: name))
            }
            scn = elf_nextscn(elf, current)
        }
        return result
    }

    /// Reads `buffer.count` bytes at `offset` of the file into `buffer` with `pread` (not through the mapping:
    /// for parts read once, which would otherwise stay resident). False when the file holds fewer bytes there.
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        var done = 0
        while done < buffer.count {
            guard let position = off_t(exactly: offset &+ UInt64(done)), offset <= UInt64.max - UInt64(done)
            else { return false }
            let count = pread(file.descriptor, buffer.baseAddress.map { $0 + done }, buffer.count - done, position)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            done += count
        }
        return true
    }

    /// The load bias origin: the page-aligned `p_vaddr` of the first `PT_LOAD` segment (0 for PIE and DSOs).
    func firstLoadAddress() -> UInt64 {
        for phdr in programHeaders() where phdr.p_type == UInt32(PT_LOAD) {
            return phdr.p_vaddr & ~UInt64(0xfff)
        }
        return 0
    }
}
