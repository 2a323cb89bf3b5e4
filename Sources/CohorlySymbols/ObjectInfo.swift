import CDwarf

/// What an ELF file is and what it can be used for: ids, kind, architecture, features and problems.
public struct ObjectInfo: Equatable, Sendable {
    /// The kind of ELF object.
    public enum Kind: String, Sendable {
        /// A program (`ET_EXEC`, or a PIE `ET_DYN`).
        case executable
        /// A shared library (`ET_DYN` that is not a PIE).
        case sharedLibrary = "library"
        /// A separate debug file (`objcopy --only-keep-debug`): its code sections are `SHT_NOBITS`.
        case debugCompanion = "debug companion"
        /// An object file (`ET_REL`).
        case relocatable
        /// A core dump (`ET_CORE`).
        case core
        /// Anything else.
        case other
    }

    /// How one debug section is stored.
    public enum Compression: String, Sendable {
        /// `SHF_COMPRESSED` with zlib (readable).
        case zlib
        /// GNU `.zdebug_*` sections (readable).
        case zlibGNU = "zlib-gnu"
        /// `SHF_COMPRESSED` with zstd: elfutils 0.188 cannot read it; read when libzstd is installed (decompressed
        /// in memory before libdw opens the file).
        case zstd
        /// `SHF_COMPRESSED` with an unknown algorithm.
        case unknown
    }

    /// A reason the file is of limited use for symbolication.
    public enum Problem: String, Sendable, CaseIterable {
        /// No GNU build id: nothing can match the file to a crash.
        case noBuildId = "no build id (link with --build-id)"
        /// No DWARF debug info: only symbol names can be recovered.
        case noDebugInfo = "no debug info (upload before strip, or build with -g)"
        /// A debug companion without `.eh_frame`/`.debug_frame`: upload the binary too.
        case noUnwindInfo = "debug file without unwind info (upload the executable too)"
        /// zstd-compressed sections, and no libzstd here to read them (elfutils 0.188 cannot).
        case zstdSections =
            "zstd-compressed sections (unreadable; decompress with objcopy --decompress-debug-sections)"
        /// Split DWARF (`.dwo` / skeleton units): the debug info lives in other files.
        case splitDwarf = "split DWARF (.dwo/.dwp files are not supported)"
        /// No symbol table at all.
        case noSymbols = "no symbol table"
    }

    /// The file's path.
    public var path: String
    /// The kind of object.
    public var kind: Kind
    /// The architecture name (`x86_64`, `arm64`, `x86`, `arm`, …).
    public var arch: String
    /// Whether the file is little-endian.
    public var littleEndian: Bool
    /// The GNU build id bytes (nil when absent).
    public var buildId: [UInt8]?
    /// Has a non-empty `.symtab`.
    public var hasSymtab: Bool
    /// Has a non-empty `.dynsym`.
    public var hasDynsym: Bool
    /// Has DWARF debug info (`.debug_info` or `.zdebug_info` with contents).
    public var hasDebugInfo: Bool
    /// Has unwind info (`.eh_frame` or `.debug_frame` with contents).
    public var hasUnwindInfo: Bool
    /// The `.gnu_debuglink` file name and CRC32, when present.
    public var debugLink: DebugLink?
    /// Compressed debug sections by name (empty when none are compressed).
    public var compressedSections: [String: Compression]
    /// Has split-DWARF sections or skeleton units.
    public var hasSplitDwarf: Bool

    /// `.gnu_debuglink` contents.
    public struct DebugLink: Equatable, Sendable {
        /// The debug file's name (no directory).
        public var name: String
        /// The CRC32 of the whole debug file.
        public var crc: UInt32
    }

    /// Lowercase hex of the build id, or nil without one.
    public var codeId: String? { buildId.map(DebugId.codeId) }

    /// The build id as a GUID (Sentry's rule), or nil without one.
    public var debugId: String? { buildId.map { DebugId.debugId($0, littleEndian: littleEndian) } }

    /// Feature names, in a fixed order: `symtab`, `debug`, `unwind`.
    public var features: [String] {
        var result: [String] = []
        if hasSymtab || hasDynsym { result.append("symtab") }
        if hasDebugInfo { result.append("debug") }
        if hasUnwindInfo { result.append("unwind") }
        return result
    }

    /// Problems, in a fixed order (empty when the file is fully usable).
    public var problems: [Problem] {
        var result: [Problem] = []
        if buildId == nil || buildId?.isEmpty == true { result.append(.noBuildId) }
        if !hasDebugInfo { result.append(.noDebugInfo) }
        if kind == .debugCompanion && !hasUnwindInfo { result.append(.noUnwindInfo) }
        let values = compressedSections.values
        if values.contains(.unknown) || (values.contains(.zstd) && !ElfFile.canReadZstd) {
            result.append(.zstdSections)
        }
        if hasSplitDwarf { result.append(.splitDwarf) }
        if !hasSymtab && !hasDynsym && !hasDebugInfo { result.append(.noSymbols) }
        return result
    }

    /// Reads the ELF file at `path`. Throws a ``SymbolsError`` naming the file for anything that is not a
    /// readable ELF file.
    public init(path: String) throws(SymbolsError) {
        let file = try ElfFile(path: path, mapped: false)
        self.init(file: file)
    }

    init(file: ElfFile) {
        path = file.path
        let header = file.header
        littleEndian = header.e_ident.5 == UInt8(ELFDATA2LSB)
        arch = ObjectInfo.archName(
            machine: header.e_machine, is64: header.e_ident.4 == UInt8(ELFCLASS64))
        buildId = ObjectInfo.readBuildId(file)
        debugLink = ObjectInfo.readDebugLink(file)

        let sections = file.sections()
        var symtab = false
        var dynsym = false
        var debugInfo = false
        var unwind = false
        var split = false
        var compressed: [String: Compression] = [:]
        var hasCode = false
        for section in sections {
            let shdr = section.header
            let hasBytes = shdr.sh_type != UInt32(SHT_NOBITS) && shdr.sh_size > 0
            switch section.name {
            case ".symtab": symtab = symtab || (hasBytes && shdr.sh_size > shdr.sh_entsize)
            case ".dynsym": dynsym = dynsym || (hasBytes && shdr.sh_size > shdr.sh_entsize)
            case ".debug_info", ".zdebug_info": debugInfo = debugInfo || hasBytes
            case ".eh_frame", ".debug_frame", ".zdebug_frame": unwind = unwind || hasBytes
            case ".text": hasCode = hasCode || hasBytes
            default: break
            }
            if section.name.hasSuffix(".dwo") { split = true }
            if section.name == ".debug_info" && hasBytes && shdr.sh_flags & cly_shf_compressed == 0 {
                split =
                    split || ObjectInfo.hasSkeletonUnits(file, section: shdr, littleEndian: littleEndian)
            }
            if hasBytes, let kind = ObjectInfo.compression(of: section) {
                compressed[section.name] = kind
            }
        }
        hasSymtab = symtab
        hasDynsym = dynsym
        hasDebugInfo = debugInfo
        hasUnwindInfo = unwind
        compressedSections = compressed
        hasSplitDwarf = split
        kind = ObjectInfo.kind(
            file: file, header: header, hasCode: hasCode, hasSections: !sections.isEmpty)
    }
}
