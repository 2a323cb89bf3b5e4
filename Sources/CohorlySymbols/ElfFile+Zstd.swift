import CDwarf
import CZstd

#if canImport(Glibc)
    import Glibc
#endif

extension ElfFile {
    /// Whether zstd-compressed sections can be read here: libzstd (loaded on first use) is installed.
    static var canReadZstd: Bool { cly_zstd_load_error() == nil }

    /// Decompresses the `SHF_COMPRESSED` sections stored with zstd (clang's and ld's `-gz=zstd`), which
    /// elfutils 0.188 cannot read, into memory this file owns, and makes libelf hand out the decompressed bytes:
    /// libdw then reads them like any plain section. Sections whose header or frame is wrong stay as they are
    /// (libdw skips them). Called before libdw opens the file; a second call finds nothing left to do.
    func decompressZstdSections() {
        var scn = elf_nextscn(elf, nil)
        var checkedLibrary = false
        while let current = scn {
            scn = elf_nextscn(elf, current)
            var shdr = GElf_Shdr()
            var chdr = GElf_Chdr()
            guard gelf_getshdr(current, &shdr) != nil, shdr.sh_flags & cly_shf_compressed != 0,
                gelf_getchdr(current, &chdr) != nil, chdr.ch_type == Self.elfCompressZstd
            else { continue }
            if !checkedLibrary {
                guard Self.canReadZstd else { return }
                checkedLibrary = true
            }
            let headerSize = gelf_fsize(elf, ELF_T_CHDR, 1, UInt32(EV_CURRENT))
            guard let data = elf_getdata(current, nil), let compressed = data.pointee.d_buf,
                headerSize > 0, data.pointee.d_size > headerSize,
                chdr.ch_size > 0, chdr.ch_size <= Self.largestDecompressedSection,
                chdr.ch_size / UInt64(data.pointee.d_size) <= Self.largestRatio,
                let size = Int(exactly: chdr.ch_size), let buffer = malloc(size)
            else { continue }
            var error: UnsafePointer<CChar>?
            let made = cly_zstd_decompress(
                buffer, size, compressed + headerSize, data.pointee.d_size - headerSize, &error)
            guard made == size else {
                free(buffer)
                continue
            }
            decompressedSections.append(buffer)
            data.pointee.d_buf = buffer
            data.pointee.d_size = size
            data.pointee.d_type = ELF_T_BYTE
            data.pointee.d_align = Int(exactly: max(chdr.ch_addralign, 1)) ?? 1
            shdr.sh_flags &= ~cly_shf_compressed
            shdr.sh_size = chdr.ch_size
            shdr.sh_addralign = chdr.ch_addralign
            _ = gelf_update_shdr(current, &shdr)
        }
    }

    /// `ELFCOMPRESS_ZSTD` (unknown to elfutils 0.188's headers).
    static let elfCompressZstd: UInt32 = 2

    /// The most one section may claim to hold decompressed, in bytes and as a multiple of its stored size (a
    /// header is input: it must not make us ask for any amount of memory). Debug sections shrink 3-10 times.
    static let largestDecompressedSection: UInt64 = 1 << 32
    static let largestRatio: UInt64 = 1024
}
