import CDwarf

extension DieScanner {
    /// What ``functionName(at:string:)`` found.
    enum NameSearch: Equatable {
        /// The name's bytes (in `.debug_str`, or inline in `.debug_info`).
        case found(UnsafePointer<CChar>)
        /// The DIE and its origins have no name.
        case absent
        /// Something this reader leaves to libdw: a form it does not decode, a reference out of the unit, a DIE
        /// it cannot read. The caller asks libdw, which gives the same answer or its own error.
        case unreadable
    }

    /// The name libdw's `dwarf_attr_integrate` + `dwarf_formstring` give a function DIE at `offset` (in
    /// `.debug_info`) — the first of `DW_AT_linkage_name`, `DW_AT_MIPS_linkage_name` and `DW_AT_name` found
    /// along the DIE and its chain of `DW_AT_abstract_origin`/`DW_AT_specification` (at most 9 DIEs, as libdw
    /// follows) — read straight from the bytes: no search for the unit, no libdw attribute walk per name kind.
    /// `string` turns a `DW_FORM_strp` offset into the bytes libdw would give (nil: leave it to libdw).
    func functionName(at offset: UInt64, string: (UInt64) -> UnsafePointer<CChar>?) -> NameSearch {
        // Per name kind, the first found along the chain (libdw searches the whole chain for one kind before
        // the next: a linkage name anywhere wins over a plain name nearer).
        var linkage: NameValue?
        var mipsLinkage: NameValue?
        var plain: NameValue?
        guard offset < UInt64(end - sectionStart) else { return .unreadable }
        var die = sectionStart + Int(offset)
        for _ in 0..<9 {
            guard die >= firstDie, die < end, let attributes = nameAttributes(of: die) else { return .unreadable }
            linkage = linkage ?? attributes.names.linkage
            mipsLinkage = mipsLinkage ?? attributes.names.mipsLinkage
            plain = plain ?? attributes.names.plain
            guard linkage == nil, let next = attributes.origin else { break }
            die = next
        }
        switch linkage ?? mipsLinkage ?? plain {
        case nil: return .absent
        case .inline(let pointer): return .found(pointer)
        case .strp(let stringOffset):
            guard let pointer = string(stringOffset) else { return .unreadable }
            return .found(pointer)
        }
    }

    /// A name attribute's value as stored.
    private enum NameValue {
        case strp(UInt64)
        case inline(UnsafePointer<CChar>)
    }

    /// The name attributes of the DIE at `die` (the first of each, as `dwarf_attr` finds them) and the DIE its
    /// `DW_AT_abstract_origin` (else `DW_AT_specification`) refers to; nil when the DIE, or one of those
    /// attributes, is not one this reader decodes.
    private func nameAttributes(
        of die: UnsafePointer<UInt8>
    ) -> (names: (linkage: NameValue?, mipsLinkage: NameValue?, plain: NameValue?), origin: UnsafePointer<UInt8>?)? {
        guard let (code, afterCode) = DieScanner.readLEB(die, end: end), code != 0,
            let abbreviation = abbreviation(code)
        else { return nil }
        var names: (linkage: NameValue?, mipsLinkage: NameValue?, plain: NameValue?) = (nil, nil, nil)
        var abstractOrigin: UnsafePointer<UInt8>?
        var specification: UnsafePointer<UInt8>?
        var seenOrigin = false
        var seenSpecification = false
        var cursor = afterCode
        for index in Int(abbreviation.first)..<Int(abbreviation.first + abbreviation.count) {
            let spec = specs[index]
            switch Int32(bitPattern: spec.name) {
            case Int32(DW_AT_linkage_name) where names.linkage == nil:
                guard let value = nameValue(spec.form, at: cursor) else { return nil }
                names.linkage = value
            case Int32(DW_AT_MIPS_linkage_name) where names.mipsLinkage == nil:
                guard let value = nameValue(spec.form, at: cursor) else { return nil }
                names.mipsLinkage = value
            case Int32(DW_AT_name) where names.plain == nil:
                guard let value = nameValue(spec.form, at: cursor) else { return nil }
                names.plain = value
            case Int32(DW_AT_abstract_origin) where !seenOrigin:
                seenOrigin = true
                guard let target = reference(spec.form, at: cursor) else { return nil }
                abstractOrigin = target
            case Int32(DW_AT_specification) where !seenSpecification:
                seenSpecification = true
                guard let target = reference(spec.form, at: cursor) else { return nil }
                specification = target
            default: break
            }
            guard let next = skip(form: spec.form, at: cursor) else { return nil }
            cursor = next
        }
        return (names, abstractOrigin ?? specification)
    }

    /// A name's value in `form` at `position` (nil for a form left to libdw).
    private func nameValue(_ form: UInt32, at position: UnsafePointer<UInt8>) -> NameValue? {
        switch Int(form) {
        case DW_FORM_strp:
            return little(offsetSize, at: position).map { .strp($0) }
        case DW_FORM_string:
            // `skip` checks the terminating NUL lies inside the unit.
            guard skip(form: form, at: position) != nil else { return nil }
            return .inline(UnsafeRawPointer(position).assumingMemoryBound(to: CChar.self))
        default: return nil
        }
    }

    /// The DIE a reference of `form` at `position` refers to, when it lies inside this unit (nil otherwise, or
    /// for a form left to libdw).
    func reference(_ form: UInt32, at position: UnsafePointer<UInt8>) -> UnsafePointer<UInt8>? {
        let value: UInt64?
        let base: UnsafePointer<UInt8>
        switch Int(form) {
        case DW_FORM_ref1: (value, base) = (little(1, at: position), unitStart)
        case DW_FORM_ref2: (value, base) = (little(2, at: position), unitStart)
        case DW_FORM_ref4: (value, base) = (little(4, at: position), unitStart)
        case DW_FORM_ref8: (value, base) = (little(8, at: position), unitStart)
        case DW_FORM_ref_udata: (value, base) = (DieScanner.readLEB(position, end: end)?.0, unitStart)
        case DW_FORM_ref_addr:
            (value, base) = (little(version <= 2 ? addressSize : offsetSize, at: position), sectionStart)
        default: return nil
        }
        guard let value, value < UInt64(end - base) else { return nil }
        let target = base + Int(value)
        return target >= firstDie ? target : nil
    }

    /// A little-endian value of `size` bytes at `position`, or nil when it runs past the unit.
    private func little(_ size: Int, at position: UnsafePointer<UInt8>) -> UInt64? {
        guard end - position >= size else { return nil }
        var value: UInt64 = 0
        for index in 0..<size { value |= UInt64(position[index]) << UInt64(8 * index) }
        return value
    }
}
