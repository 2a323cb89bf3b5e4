import CDwarf

/// One unit's line program (`.debug_line`, DWARF 2–5), decoded straight from the mapped section: its rows in
/// libdw's order (by address, a sequence end before other rows at its address, else as emitted) and its file
/// names joined to their directories as libdw joins them. No libdw call, so no lock and no unit lookup per
/// program: libdw finds a unit's line program through a `Dwarf` handle, and a fresh handle reads every unit
/// header before it first (see `DwarfIndex.loadLines`).
///
/// Decoding gives up (nil) on anything it does not know — an unknown form in a DWARF 5 file table, VLIW
/// operation indexes, `DW_LNE_define_file`, a header or operand past the section — and the caller then asks
/// libdw, so answers never depend on this reader knowing less.
struct LineProgram {
    struct Row {
        var address: UInt64
        var line: UInt32
        var column: UInt32
        /// Index into `files` (as the program numbers them; may be out of range).
        var file: UInt32
        var isSequenceEnd: Bool
    }

    /// The rows, sorted as libdw sorts them.
    var rows: [Row] = []
    /// The file names by number (number 0 of a DWARF 2–4 program is libdw's `???`), joined to their directory;
    /// relative when the directory is (or is the missing compilation directory).
    var files: [String] = []

    /// The sections a line program refers to.
    struct Sections {
        var line: DieScanner.Bounds
        var lineStrings: DieScanner.Bounds?
        var strings: DieScanner.Bounds?
    }

    /// Decodes the program at `offset` in `.debug_line`; `compilationDirectory` is directory 0 of a DWARF 2–4
    /// program (as libdw takes it from the unit's `DW_AT_comp_dir`).
    init?(sections: Sections, offset: UInt64, compilationDirectory: String?) {
        let section = sections.line
        guard offset < UInt64(section.end - section.start) else { return nil }
        var reader = Reader(position: section.start + Int(offset), end: section.end)
        guard var length = reader.fixed(4) else { return nil }
        var offsetSize = 4
        if length == 0xffff_ffff {
            guard let long = reader.fixed(8) else { return nil }
            length = long
            offsetSize = 8
        }
        guard length <= UInt64(reader.end - reader.position) else { return nil }
        let programEnd = reader.position + Int(length)
        reader.end = programEnd
        guard let version = reader.fixed(2), version >= 2, version <= 5 else { return nil }
        var addressSize = 8
        if version >= 5 {
            guard let size = reader.fixed(1), size == 4 || size == 8, reader.fixed(1) != nil else { return nil }
            addressSize = Int(size)
        }
        guard let headerLength = reader.fixed(offsetSize), headerLength <= UInt64(reader.end - reader.position)
        else { return nil }
        let programStart = reader.position + Int(headerLength)
        guard let minimumInstructionLength = reader.fixed(1) else { return nil }
        if version >= 4 {
            guard let maximumOperations = reader.fixed(1), maximumOperations == 1 else { return nil }  // no VLIW
        }
        guard reader.fixed(1) != nil, let lineBaseByte = reader.fixed(1),
            let lineRange = reader.fixed(1), lineRange > 0, let opcodeBase = reader.fixed(1), opcodeBase > 0
        else { return nil }
        let lineBase = Int64(Int8(truncatingIfNeeded: lineBaseByte))
        var standardLengths: [UInt8] = [0]
        for _ in 1..<opcodeBase {
            guard let count = reader.fixed(1) else { return nil }
            standardLengths.append(UInt8(truncatingIfNeeded: count))
        }
        var directories: [String?] = []
        if version >= 5 {
            guard
                let read = LineProgram.readEntries(
                    &reader, sections: sections, offsetSize: offsetSize, version: version)
            else { return nil }
            directories = read.map { $0.path }
            guard
                let entries = LineProgram.readEntries(
                    &reader, sections: sections, offsetSize: offsetSize, version: version)
            else { return nil }
            for entry in entries {
                guard let name = entry.path else { return nil }
                guard entry.directory < UInt64(directories.count) else { return nil }
                files.append(LineProgram.join(directories[Int(entry.directory)], name))
            }
        } else {
            directories.append(compilationDirectory)
            while true {
                guard let name = reader.string() else { return nil }
                if name.isEmpty { break }
                directories.append(name)
            }
            files.append("???")
            while true {
                guard let name = reader.string() else { return nil }
                if name.isEmpty { break }
                guard let directory = reader.leb(), reader.leb() != nil, reader.leb() != nil,
                    directory < UInt64(directories.count)
                else { return nil }
                files.append(LineProgram.join(directories[Int(directory)], name))
            }
        }
        reader.position = programStart
        guard
            decode(
                &reader, addressSize: addressSize, minimumInstructionLength: minimumInstructionLength,
                lineBase: lineBase, lineRange: lineRange, opcodeBase: opcodeBase, standardLengths: standardLengths)
        else { return nil }
        // libdw's order: by address, a sequence end first at its address, otherwise as emitted (stable).
        var order = Array(0..<Int32(rows.count))
        let decoded = rows
        order.sort { left, right in
            let a = decoded[Int(left)]
            let b = decoded[Int(right)]
            if a.address != b.address { return a.address < b.address }
            if a.isSequenceEnd != b.isSequenceEnd { return a.isSequenceEnd }
            return left < right
        }
        rows = order.map { decoded[Int($0)] }
    }

    /// Runs the program from `reader`'s position to its end, appending a row per `DW_LNS_copy`, special opcode
    /// and `DW_LNE_end_sequence`. False on an operand past the end or an opcode this reader leaves to libdw.
    private mutating func decode(
        _ reader: inout Reader, addressSize: Int, minimumInstructionLength: UInt64, lineBase: Int64,
        lineRange: UInt64, opcodeBase: UInt64, standardLengths: [UInt8]
    ) -> Bool {
        var address: UInt64 = 0
        var file: UInt32 = 1
        var line: Int64 = 1
        var column: UInt64 = 0
        func reset() {
            address = 0
            file = 1
            line = 1
            column = 0
        }
        func append(isEnd: Bool) {
            rows.append(
                Row(
                    address: address, line: UInt32(truncatingIfNeeded: line),
                    column: UInt32(truncatingIfNeeded: column), file: file, isSequenceEnd: isEnd))
        }
        while reader.position < reader.end {
            guard let opcode = reader.fixed(1) else { return false }
            if opcode >= opcodeBase {
                let adjusted = opcode - opcodeBase
                address &+= (adjusted / lineRange) &* minimumInstructionLength
                line &+= lineBase &+ Int64(adjusted % lineRange)
                append(isEnd: false)
                continue
            }
            switch Int(opcode) {
            case 0:  // extended
                guard let length = reader.leb(), length > 0, length <= UInt64(reader.end - reader.position),
                    let sub = reader.fixed(1)
                else { return false }
                let next = reader.position + Int(length) - 1
                switch Int(sub) {
                case DW_LNE_end_sequence:
                    append(isEnd: true)
                    reset()
                case DW_LNE_set_address:
                    guard length - 1 == UInt64(addressSize), let value = reader.fixed(addressSize) else { return false }
                    address = value
                case DW_LNE_define_file: return false
                default: break  // DW_LNE_set_discriminator and vendor opcodes: nothing a row keeps
                }
                reader.position = next
            case DW_LNS_copy: append(isEnd: false)
            case DW_LNS_advance_pc:
                guard let value = reader.leb() else { return false }
                address &+= value &* minimumInstructionLength
            case DW_LNS_advance_line:
                guard let value = reader.signedLeb() else { return false }
                line &+= value
            case DW_LNS_set_file:
                guard let value = reader.leb() else { return false }
                file = UInt32(truncatingIfNeeded: min(value, UInt64(UInt32.max)))
            case DW_LNS_set_column:
                guard let value = reader.leb() else { return false }
                column = value
            case DW_LNS_negate_stmt, DW_LNS_set_basic_block, DW_LNS_set_prologue_end, DW_LNS_set_epilogue_begin:
                break
            case DW_LNS_const_add_pc:
                address &+= ((255 - opcodeBase) / lineRange) &* minimumInstructionLength
            case DW_LNS_fixed_advance_pc:
                guard let value = reader.fixed(2) else { return false }
                address &+= value
            case DW_LNS_set_isa:
                guard reader.leb() != nil else { return false }
            default:
                // An opcode this producer defined: skip its LEB128 operands.
                for _ in 0..<Int(standardLengths[Int(opcode)]) {
                    guard reader.leb() != nil else { return false }
                }
            }
        }
        return true
    }

    /// libdw's join: an absolute name as it is, else the directory, `/`, the name (the name alone when the
    /// directory is unknown).
    static func join(_ directory: String?, _ name: String) -> String {
        if name.hasPrefix("/") { return name }
        guard let directory else { return name }
        return directory + "/" + name
    }

    /// A DWARF 5 directory or file table: per entry its `DW_LNCT_path` and `DW_LNCT_directory_index`.
    private static func readEntries(
        _ reader: inout Reader, sections: Sections, offsetSize: Int, version: UInt64
    ) -> [(path: String?, directory: UInt64)]? {
        guard let formatCount = reader.fixed(1) else { return nil }
        var format: [(content: UInt64, form: UInt64)] = []
        for _ in 0..<formatCount {
            guard let content = reader.leb(), let form = reader.leb() else { return nil }
            format.append((content, form))
        }
        guard let count = reader.leb(), count <= UInt64(reader.end - reader.position) else { return nil }
        var entries: [(path: String?, directory: UInt64)] = []
        for _ in 0..<count {
            var entry: (path: String?, directory: UInt64) = (nil, 0)
            for (content, form) in format {
                switch Int(form) {
                case DW_FORM_string:
                    guard let text = reader.string() else { return nil }
                    if content == UInt64(DW_LNCT_path) { entry.path = text }
                case DW_FORM_line_strp, DW_FORM_strp:
                    guard let offset = reader.fixed(offsetSize),
                        let strings = form == UInt64(DW_FORM_line_strp) ? sections.lineStrings : sections.strings,
                        let text = Reader.string(in: strings, at: offset)
                    else { return nil }
                    if content == UInt64(DW_LNCT_path) { entry.path = text }
                case DW_FORM_udata:
                    guard let value = reader.leb() else { return nil }
                    if content == UInt64(DW_LNCT_directory_index) { entry.directory = value }
                case DW_FORM_data1, DW_FORM_data2, DW_FORM_data4, DW_FORM_data8:
                    let size = [DW_FORM_data1: 1, DW_FORM_data2: 2, DW_FORM_data4: 4, DW_FORM_data8: 8][Int(form)] ?? 8
                    guard let value = reader.fixed(size) else { return nil }
                    if content == UInt64(DW_LNCT_directory_index) { entry.directory = value }
                case DW_FORM_data16:
                    guard reader.skip(16) else { return nil }
                case DW_FORM_block:
                    guard let length = reader.leb(), length <= UInt64(reader.end - reader.position),
                        reader.skip(Int(length))
                    else { return nil }
                default: return nil
                }
            }
            entries.append(entry)
        }
        return entries
    }

    /// A bounded little-endian reader.
    struct Reader {
        var position: UnsafePointer<UInt8>
        var end: UnsafePointer<UInt8>

        mutating func fixed(_ size: Int) -> UInt64? {
            guard end - position >= size else { return nil }
            var value: UInt64 = 0
            for index in 0..<size { value |= UInt64(position[index]) << UInt64(8 * index) }
            position += size
            return value
        }

        mutating func skip(_ size: Int) -> Bool {
            guard size >= 0, end - position >= size else { return false }
            position += size
            return true
        }

        mutating func leb() -> UInt64? {
            guard let (value, next) = DieScanner.readLEB(position, end: end) else { return nil }
            position = next
            return value
        }

        mutating func signedLeb() -> Int64? {
            guard let (value, next) = DieScanner.readSignedLEB(position, end: end) else { return nil }
            position = next
            return value
        }

        /// A NUL-terminated string (nil when it runs past the end).
        mutating func string() -> String? {
            var cursor = position
            while cursor < end {
                if cursor.pointee == 0 {
                    let text = String(
                        decoding: UnsafeBufferPointer(start: position, count: cursor - position), as: UTF8.self)
                    position = cursor + 1
                    return text
                }
                cursor += 1
            }
            return nil
        }

        /// The NUL-terminated string at `offset` of a string section.
        static func string(in section: DieScanner.Bounds, at offset: UInt64) -> String? {
            guard offset < UInt64(section.end - section.start) else { return nil }
            var reader = Reader(position: section.start + Int(offset), end: section.end)
            return reader.string()
        }
    }
}
