import CDwarf

/// Finds where a DIE's attributes end from its abbreviation's forms, so a compile unit's DIE tree can be read
/// in one linear pass. (Walking it with `dwarf_child`/`dwarf_siblingof` re-scans every subtree once per
/// ancestor when producers omit `DW_AT_sibling`, as clang and swiftc do.) Any form it does not know, or any
/// read past the unit's end, makes it give up (nil), and the caller falls back to libdw's own walk.
final class DieScanner {
    let addressSize: Int
    let offsetSize: Int
    let version: Int
    /// One past the unit's last byte.
    let end: UnsafePointer<UInt8>
    /// Attribute forms per abbreviation code (libdw re-reads the abbreviation's list for every attribute
    /// asked); codes are small integers, so an array indexed by code, with a dictionary for large ones.
    private var formsByCode: [[UInt32]?] = []
    private var formsByLargeCode: [UInt32: [UInt32]] = [:]

    /// The bytes of the section the units live in.
    struct Bounds {
        let start: UnsafePointer<UInt8>
        let end: UnsafePointer<UInt8>
    }

    /// A scanner for the unit whose DIE is `unitDie`, or nil when its bounds cannot be determined or the unit
    /// does not lie inside `section`.
    init?(dwarf: OpaquePointer, unitDie: Dwarf_Die, version: Int, section: Bounds) {
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
        guard dieOffset != UInt64.max,
            dwarf_next_unit(dwarf, headerOffset, &nextOffset, nil, nil, nil, nil, nil, nil, nil) == 0,
            nextOffset > dieOffset
        else { return nil }
        let base = UnsafePointer<UInt8>(start.assumingMemoryBound(to: UInt8.self))
        // A hostile unit length may claim more than the section holds: never read past the section.
        guard base >= section.start, base < section.end, nextOffset - dieOffset <= UInt64(section.end - base)
        else { return nil }
        self.end = base + Int(nextOffset - dieOffset)
        self.addressSize = Int(addressSize)
        self.offsetSize = Int(offsetSize)
        self.version = version
    }

    /// The first byte after the DIE's attributes (its first child, or its next sibling), or nil.
    func attributesEnd(_ die: inout Dwarf_Die) -> UnsafePointer<UInt8>? {
        // libdw marks an unreadable abbreviation with (Dwarf_Abbrev *) -1.
        guard let abbrev = die.abbrev, UInt(bitPattern: abbrev) != UInt.max, let start = die.addr else {
            return nil
        }
        var cursor: UnsafePointer<UInt8>? = UnsafePointer(start.assumingMemoryBound(to: UInt8.self))
        cursor = skipLEB(cursor)  // the abbreviation code
        guard let list = forms(of: abbrev) else { return nil }
        for form in list {
            cursor = skip(form: form, at: cursor)
            if cursor == nil { return nil }
        }
        return cursor
    }

    /// The forms of an abbreviation's attributes, read until its (0, 0) terminator. (elfutils 0.188's
    /// `dwarf_getattrcnt` over-counts abbreviations with several `DW_FORM_implicit_const` attributes, as gcc
    /// emits, so the count only bounds the loop.)
    private func forms(of abbrev: OpaquePointer) -> [UInt32]? {
        let code = dwarf_getabbrevcode(abbrev)
        if Int(code) < formsByCode.count, let known = formsByCode[Int(code)] { return known }
        if code >= 4096, let known = formsByLargeCode[code] { return known }
        var count = 0
        guard dwarf_getattrcnt(abbrev, &count) == 0 else { return nil }
        var list: [UInt32] = []
        list.reserveCapacity(count)
        for index in 0..<count {
            var name: UInt32 = 0
            var form: UInt32 = 0
            guard dwarf_getabbrevattr(abbrev, index, &name, &form, nil) == 0 else { break }
            list.append(form)
        }
        if code < 4096 {
            if formsByCode.count <= Int(code) {
                formsByCode += Array(repeating: nil, count: Int(code) + 1 - formsByCode.count)
            }
            formsByCode[Int(code)] = list
        } else {
            formsByLargeCode[code] = list
        }
        return list
    }

    private func skip(form: UInt32, at position: UnsafePointer<UInt8>?) -> UnsafePointer<UInt8>? {
        guard let position else { return nil }
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
            return skipLEB(position)
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
            guard let (length, after) = readLEB(position), length <= UInt64(end - after) else {
                return nil
            }
            return after + Int(length)
        case DW_FORM_indirect:
            guard let (actual, after) = readLEB(position), actual != UInt64(DW_FORM_indirect),
                actual <= UInt64(UInt32.max)
            else { return nil }
            return skip(form: UInt32(actual), at: after)
        default:
            return nil
        }
    }

    private func skipLEB(_ position: UnsafePointer<UInt8>?) -> UnsafePointer<UInt8>? {
        guard let position else { return nil }
        return readLEB(position)?.1
    }

    /// An unsigned LEB128 value and the byte after it (nil when it runs past the unit or over 64 bits).
    private func readLEB(_ position: UnsafePointer<UInt8>) -> (UInt64, UnsafePointer<UInt8>)? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var cursor = position
        while cursor < end {
            let byte = cursor.pointee
            cursor += 1
            if shift < 64 { value |= UInt64(byte & 0x7f) << shift }
            if byte & 0x80 == 0 { return (value, cursor) }
            shift += 7
            if shift > 70 { return nil }
        }
        return nil
    }
}
