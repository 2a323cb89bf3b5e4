import CDwarf

/// Reads one compile unit's DIEs in a single linear pass: its own copy of the unit's abbreviation table, and
/// the attribute values the index needs (address ranges, call sites) decoded straight from the bytes.
///
/// Walking the tree with libdw (`dwarf_child`/`dwarf_siblingof`) re-scans every subtree once per ancestor when
/// producers omit `DW_AT_sibling`, as clang and swiftc do, and each `dwarf_attr` re-reads the DIE's attributes
/// from the start. Anything this reader does not know (a form, an abbreviation code, a read past the unit's
/// end) makes it give up (nil), and the caller falls back to libdw's own walk. Little-endian files only.
final class DieScanner {
    let addressSize: Int
    let offsetSize: Int
    let version: Int
    /// One past the unit's last byte.
    let end: UnsafePointer<UInt8>
    /// The first byte of `.debug_info` (DIE offsets are counted from it).
    let sectionStart: UnsafePointer<UInt8>
    /// The unit's header (unit-relative references count from it) and its first DIE.
    let unitStart: UnsafePointer<UInt8>
    let firstDie: UnsafePointer<UInt8>

    /// An abbreviation: a DIE's tag, whether children follow it, and its attributes' specs.
    struct Abbreviation {
        var tag: UInt32
        var hasChildren: Bool
        /// `[first, first + count)` in `specs`.
        var first: Int32
        var count: Int32
        /// The size of its attribute values when every form has one fixed size in this unit (-1: not), so a
        /// DIE the pass does not read is stepped over in one addition.
        var fixedSize: Int32 = -1
        /// Whether it has `DW_AT_low_pc` or `DW_AT_ranges`: a DIE without either has no address range.
        var hasAddresses = false
    }

    /// A decoded abbreviation table, for units of one address size, offset size and version.
    struct AbbreviationTable {
        var byCode: [Abbreviation?] = []
        var largeCodes: [UInt64: Abbreviation] = [:]
        var specs: [AttributeSpec] = []
    }

    /// Abbreviation tables decoded so far, by their offset in `.debug_abbrev` and the unit shape they were sized
    /// for: units sharing a table (those of one object file, and often many more) decode it once.
    final class AbbreviationCache {
        struct Key: Hashable {
            var offset: UInt64
            var addressSize: Int
            var offsetSize: Int
            var version: Int
        }
        var tables: [Key: AbbreviationTable] = [:]
        init() {}
    }

    /// One attribute of an abbreviation.
    struct AttributeSpec {
        var name: UInt32
        var form: UInt32
        /// The value of a `DW_FORM_implicit_const` attribute.
        var implicitConstant: Int64
    }

    /// Abbreviations by code (codes are small and dense in practice; others go to `largeCodes`).
    private var byCode: [Abbreviation?] = []
    private var largeCodes: [UInt64: Abbreviation] = [:]
    private(set) var specs: [AttributeSpec] = []
    /// Whether the abbreviations came from the cache rather than being decoded for this reader.
    private(set) var sharedAbbreviations = false

    /// The bytes of a section.
    struct Bounds {
        let start: UnsafePointer<UInt8>
        let end: UnsafePointer<UInt8>
    }

    /// `.debug_ranges` (DWARF 2-4 range lists), when the file has it: the linear pass reads a scope's
    /// `DW_AT_ranges` there itself.
    var rangeListSection: Bounds?

    /// Where the unit's abbreviation table starts in `.debug_abbrev`.
    private(set) var abbreviationOffset: UInt64 = 0

    /// A reader for the unit whose DIE is `unitDie`, or nil when its header or abbreviations cannot be read or
    /// the unit does not lie inside `section` (`.debug_info`) with its abbreviations inside `abbreviations`.
    /// A table `cache` holds for the unit's abbreviation offset (and shape) is used rather than read again;
    /// one read here is added to it.
    init?(
        dwarf: OpaquePointer, unitDie: Dwarf_Die, version: Int, section: Bounds, abbreviations: Bounds,
        cache: AbbreviationCache? = nil
    ) {
        var die = unitDie
        var cuDie = Dwarf_Die()
        var addressSize: UInt8 = 0
        var offsetSize: UInt8 = 0
        guard dwarf_diecu(&die, &cuDie, &addressSize, &offsetSize) != nil, let start = die.addr else {
            return nil
        }
        let dieOffset = dwarf_dieoffset(&die)
        let headerOffset = dieOffset - dwarf_cuoffset(&die)
        var nextOffset: Dwarf_Off = 0
        var abbreviationOffset: Dwarf_Off = 0
        guard dieOffset != UInt64.max,
            dwarf_next_unit(
                dwarf, headerOffset, &nextOffset, nil, nil, &abbreviationOffset, nil, nil, nil, nil) == 0,
            nextOffset > dieOffset
        else { return nil }
        let base = UnsafePointer<UInt8>(start.assumingMemoryBound(to: UInt8.self))
        // A hostile unit length may claim more than the section holds: never read past the section.
        guard base >= section.start, base < section.end, nextOffset - dieOffset <= UInt64(section.end - base),
            abbreviationOffset < UInt64(abbreviations.end - abbreviations.start)
        else { return nil }
        self.end = base + Int(nextOffset - dieOffset)
        self.sectionStart = section.start
        self.firstDie = base
        // The header lies before the unit DIE inside the section (libdw read it there).
        self.unitStart = base - Int(min(dieOffset - headerOffset, UInt64(base - section.start)))
        self.addressSize = Int(addressSize)
        self.offsetSize = Int(offsetSize)
        self.version = version
        self.abbreviationOffset = abbreviationOffset
        guard addressSize == 4 || addressSize == 8 else { return nil }
        let key = AbbreviationCache.Key(
            offset: abbreviationOffset, addressSize: Int(addressSize), offsetSize: Int(offsetSize), version: version)
        if let table = cache?.tables[key] {
            byCode = table.byCode
            largeCodes = table.largeCodes
            specs = table.specs
            sharedAbbreviations = true
        } else {
            guard readAbbreviations(from: abbreviations.start + Int(abbreviationOffset), end: abbreviations.end)
            else { return nil }
            for code in byCode.indices {
                let size = fixedSize(byCode[code])
                byCode[code]?.fixedSize = size
            }
            for code in Array(largeCodes.keys) {
                let size = fixedSize(largeCodes[code])
                largeCodes[code]?.fixedSize = size
            }
            cache?.tables[key] = AbbreviationTable(byCode: byCode, largeCodes: largeCodes, specs: specs)
        }
    }

    /// The size of the attribute values of a DIE of `abbreviation` when each form's is fixed, else -1.
    private func fixedSize(_ abbreviation: Abbreviation?) -> Int32 {
        guard let abbreviation else { return -1 }
        var total = 0
        for index in Int(abbreviation.first)..<Int(abbreviation.first + abbreviation.count) {
            let size: Int
            switch Int(specs[index].form) {
            case DW_FORM_flag_present, DW_FORM_implicit_const: size = 0
            case DW_FORM_addr: size = addressSize
            case DW_FORM_data1, DW_FORM_ref1, DW_FORM_flag, DW_FORM_strx1, DW_FORM_addrx1: size = 1
            case DW_FORM_data2, DW_FORM_ref2, DW_FORM_strx2, DW_FORM_addrx2: size = 2
            case DW_FORM_strx3, DW_FORM_addrx3: size = 3
            case DW_FORM_data4, DW_FORM_ref4, DW_FORM_ref_sup4, DW_FORM_strx4, DW_FORM_addrx4: size = 4
            case DW_FORM_data8, DW_FORM_ref8, DW_FORM_ref_sig8, DW_FORM_ref_sup8: size = 8
            case DW_FORM_data16: size = 16
            case DW_FORM_strp, DW_FORM_line_strp, DW_FORM_sec_offset, DW_FORM_strp_sup, DW_FORM_GNU_ref_alt,
                DW_FORM_GNU_strp_alt:
                size = offsetSize
            case DW_FORM_ref_addr: size = version <= 2 ? addressSize : offsetSize
            default: return -1
            }
            total += size
            guard total < 1 << 24 else { return -1 }  // a hostile table: left to the form-by-form skip
        }
        return Int32(total)
    }

    /// The byte after the attribute values of a DIE of `abbreviation` whose values start at `position`, or nil
    /// when they cannot be skipped.
    @inline(__always)
    func skipAttributes(of abbreviation: Abbreviation, at position: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        if abbreviation.fixedSize >= 0 {
            return end - position >= Int(abbreviation.fixedSize) ? position + Int(abbreviation.fixedSize) : nil
        }
        var cursor = position
        for index in Int(abbreviation.first)..<Int(abbreviation.first + abbreviation.count) {
            guard let next = skip(form: specs[index].form, at: cursor) else { return nil }
            cursor = next
        }
        return cursor
    }

    /// Reads the unit's abbreviation list (until its 0 code); false when it is malformed.
    private func readAbbreviations(from start: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) -> Bool {
        var cursor = start
        while true {
            guard let (code, afterCode) = DieScanner.readLEB(cursor, end: end) else { return false }
            if code == 0 { return true }
            guard let (tag, afterTag) = DieScanner.readLEB(afterCode, end: end), afterTag < end,
                tag <= UInt64(UInt32.max)
            else { return false }
            var abbreviation = Abbreviation(
                tag: UInt32(tag), hasChildren: afterTag.pointee != 0, first: Int32(specs.count), count: 0)
            cursor = afterTag + 1
            while true {
                guard let (name, afterName) = DieScanner.readLEB(cursor, end: end),
                    let (form, afterForm) = DieScanner.readLEB(afterName, end: end),
                    name <= UInt64(UInt32.max), form <= UInt64(UInt32.max)
                else { return false }
                cursor = afterForm
                if name == 0 && form == 0 { break }
                var constant: Int64 = 0
                if form == UInt64(DW_FORM_implicit_const) {
                    guard let (value, after) = DieScanner.readSignedLEB(cursor, end: end) else { return false }
                    constant = value
                    cursor = after
                }
                specs.append(AttributeSpec(name: UInt32(name), form: UInt32(form), implicitConstant: constant))
                abbreviation.count += 1
                if name == UInt64(DW_AT_low_pc) || name == UInt64(DW_AT_ranges) { abbreviation.hasAddresses = true }
            }
            if code < 1 << 16 {
                if byCode.count <= Int(code) { byCode += Array(repeating: nil, count: Int(code) + 1 - byCode.count) }
                byCode[Int(code)] = abbreviation
            } else {
                largeCodes[code] = abbreviation
            }
        }
    }

    /// The abbreviation with `code`, or nil when the unit has none such.
    func abbreviation(_ code: UInt64) -> Abbreviation? {
        if code < UInt64(byCode.count) { return byCode[Int(code)] }
        return largeCodes[code]
    }

    /// The byte after an attribute value of `form` at `position`, or nil when it cannot be skipped.
    func skip(form: UInt32, at position: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        func fixed(_ size: Int) -> UnsafePointer<UInt8>? {
            end - position >= size ? position + size : nil
        }
        func block(lengthSize: Int) -> UnsafePointer<UInt8>? {
            guard end - position >= lengthSize else { return nil }
            var length = 0
            for index in 0..<lengthSize { length |= Int(position[index]) << (8 * index) }  // little-endian DWARF
            return fixed(lengthSize + length)
        }
        switch Int(form) {
        case DW_FORM_flag_present, DW_FORM_implicit_const: return position
        case DW_FORM_addr: return fixed(addressSize)
        case DW_FORM_data1, DW_FORM_ref1, DW_FORM_flag, DW_FORM_strx1, DW_FORM_addrx1: return fixed(1)
        case DW_FORM_data2, DW_FORM_ref2, DW_FORM_strx2, DW_FORM_addrx2: return fixed(2)
        case DW_FORM_strx3, DW_FORM_addrx3: return fixed(3)
        case DW_FORM_data4, DW_FORM_ref4, DW_FORM_ref_sup4, DW_FORM_strx4, DW_FORM_addrx4:
            return fixed(4)
        case DW_FORM_data8, DW_FORM_ref8, DW_FORM_ref_sig8, DW_FORM_ref_sup8: return fixed(8)
        case DW_FORM_data16: return fixed(16)
        case DW_FORM_strp, DW_FORM_line_strp, DW_FORM_sec_offset, DW_FORM_strp_sup, DW_FORM_GNU_ref_alt,
            DW_FORM_GNU_strp_alt:
            return fixed(offsetSize)
        case DW_FORM_ref_addr: return fixed(version <= 2 ? addressSize : offsetSize)
        case DW_FORM_sdata, DW_FORM_udata, DW_FORM_ref_udata, DW_FORM_strx, DW_FORM_addrx,
            DW_FORM_loclistx,
            DW_FORM_rnglistx, DW_FORM_GNU_addr_index, DW_FORM_GNU_str_index:
            return DieScanner.readLEB(position, end: end)?.1
        case DW_FORM_string:
            var cursor = position
            while cursor < end {
                if cursor.pointee == 0 { return cursor + 1 }
                cursor += 1
            }
            return nil
        case DW_FORM_block1: return block(lengthSize: 1)
        case DW_FORM_block2: return block(lengthSize: 2)
        case DW_FORM_block4: return block(lengthSize: 4)
        case DW_FORM_block, DW_FORM_exprloc:
            guard let (length, after) = DieScanner.readLEB(position, end: end), length <= UInt64(end - after)
            else {
                return nil
            }
            return after + Int(length)
        case DW_FORM_indirect:
            guard let (actual, after) = DieScanner.readLEB(position, end: end),
                actual != UInt64(DW_FORM_indirect),
                actual <= UInt64(UInt32.max)
            else { return nil }
            return skip(form: UInt32(actual), at: after)
        default:
            return nil
        }
    }

    /// The value of a constant or address attribute (`DW_FORM_addr`, `data1/2/4/8`, `udata`, `sdata` as its
    /// bit pattern, `implicit_const`), or nil for any other form (the caller then asks libdw).
    func constant(_ spec: AttributeSpec, at position: UnsafePointer<UInt8>) -> UInt64? {
        func little(_ size: Int) -> UInt64? {
            guard end - position >= size else { return nil }
            var value: UInt64 = 0
            for index in 0..<size { value |= UInt64(position[index]) << UInt64(8 * index) }
            return value
        }
        switch Int(spec.form) {
        case DW_FORM_addr: return little(addressSize)
        case DW_FORM_data1: return little(1)
        case DW_FORM_data2: return little(2)
        case DW_FORM_data4: return little(4)
        case DW_FORM_data8: return little(8)
        case DW_FORM_udata: return DieScanner.readLEB(position, end: end)?.0
        case DW_FORM_sdata: return DieScanner.readSignedLEB(position, end: end).map { UInt64(bitPattern: $0.0) }
        case DW_FORM_implicit_const: return UInt64(bitPattern: spec.implicitConstant)
        default: return nil
        }
    }

    /// A section offset (`DW_FORM_sec_offset`, or `DW_FORM_data4`/`data8` as DWARF 2-3 give them), nil for
    /// other forms or a read past the unit.
    func sectionOffset(_ form: UInt32, at position: UnsafePointer<UInt8>) -> UInt64? {
        let size: Int
        switch Int(form) {
        case DW_FORM_sec_offset: size = offsetSize
        case DW_FORM_data4 where version < 4: size = 4
        case DW_FORM_data8 where version < 4: size = 8
        default: return nil
        }
        guard end - position >= size else { return nil }
        var value: UInt64 = 0
        for index in 0..<size { value |= UInt64(position[index]) << UInt64(8 * index) }
        return value
    }

    /// An unsigned LEB128 value and the byte after it (nil when it runs past `end` or over 64 bits).
    static func readLEB(_ position: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) -> (
        UInt64, UnsafePointer<UInt8>
    )? {
        readLEB128(position, end: end, signed: false)
    }

    /// A signed LEB128 value and the byte after it.
    static func readSignedLEB(_ position: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) -> (
        Int64, UnsafePointer<UInt8>
    )? {
        readLEB128(position, end: end, signed: true).map { (Int64(bitPattern: $0.0), $0.1) }
    }

    /// The bits of a LEB128 value (sign-extended when `signed`) and the byte after it.
    private static func readLEB128(_ position: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, signed: Bool) -> (
        UInt64, UnsafePointer<UInt8>
    )? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var cursor = position
        while cursor < end {
            let byte = cursor.pointee
            cursor += 1
            if shift < 64 { value |= UInt64(byte & 0x7f) << shift }
            shift += 7
            if byte & 0x80 == 0 {
                if signed && shift < 64 && byte & 0x40 != 0 { value |= ~0 << shift }
                return (value, cursor)
            }
            if shift > 70 { return nil }
        }
        return nil
    }
}
