import Foundation
import Testing

@testable import CohorlySymbols

/// An address covered both by a unit's own range and by a function of a unit without ranges of its own: the
/// unit whose range covers it answers (as LLVM's `llvm-symbolizer` decides: a unit without ranges is not in its
/// address table), and the rangeless unit's functions are read only for addresses no unit range covers. The
/// binary is assembled by the test from hand-written DWARF (no compiler writes such a pair on purpose).
@Suite struct RangelessUnitOverlapTests {
    /// `covered`: inside `ranged.c`'s range (which has no function) and the function `in_rangeless_unit` of
    /// `rangeless.c` (which has no range); `only_rangeless`: only in `only_in_rangeless_unit` of `rangeless.c`.
    static let assembly = """
            .text
            .globl _start
        _start:
            call covered
            call only_rangeless
            hlt
            .globl covered
            .type covered, @function
        covered:
            nop
            nop
            nop
            ret
        covered_end:
            .size covered, covered_end - covered
            .globl only_rangeless
            .type only_rangeless, @function
        only_rangeless:
            nop
            nop
            ret
        only_rangeless_end:
            .size only_rangeless, only_rangeless_end - only_rangeless

            .section .debug_abbrev,"",@progbits
            .uleb128 1, 0x11        # DW_TAG_compile_unit, children
            .byte 1
            .uleb128 0x03, 0x08     # DW_AT_name, DW_FORM_string
            .uleb128 0x11, 0x01     # DW_AT_low_pc, DW_FORM_addr
            .uleb128 0x12, 0x07     # DW_AT_high_pc, DW_FORM_data8
            .uleb128 0, 0
            .uleb128 2, 0x11        # DW_TAG_compile_unit without a range
            .byte 1
            .uleb128 0x03, 0x08
            .uleb128 0, 0
            .uleb128 3, 0x2e        # DW_TAG_subprogram
            .byte 0
            .uleb128 0x03, 0x08
            .uleb128 0x11, 0x01
            .uleb128 0x12, 0x07
            .uleb128 0, 0
            .byte 0

            .section .debug_info,"",@progbits
            .long ranged_end - ranged_start
        ranged_start:
            .short 4                # DWARF 4
            .long 0                 # abbreviations at 0
            .byte 8
            .uleb128 1
            .asciz "ranged.c"
            .quad covered
            .quad covered_end - covered
            .byte 0
        ranged_end:
            .long rangeless_end - rangeless_start
        rangeless_start:
            .short 4
            .long 0
            .byte 8
            .uleb128 2
            .asciz "rangeless.c"
            .uleb128 3
            .asciz "in_rangeless_unit"
            .quad covered
            .quad covered_end - covered
            .uleb128 3
            .asciz "only_in_rangeless_unit"
            .quad only_rangeless
            .quad only_rangeless_end - only_rangeless
            .byte 0
        rangeless_end:

        """

    @Test func theUnitWhoseRangeCoversAnAddressAnswersIt() throws {
        let directory = Scratch.path("rangeless-overlap")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.assembly.write(toFile: directory + "/overlap.s", atomically: true, encoding: .utf8)
        let path = directory + "/overlap"
        _ = try run("/usr/bin/gcc", ["-nostdlib", "-static", directory + "/overlap.s", "-o", path])
        var symbols: [String: UInt64] = [:]
        for line in try run("/usr/bin/nm", [path]).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3, let address = UInt64(parts[0], radix: 16) { symbols[String(parts[2])] = address }
        }
        let covered = try #require(symbols["covered"])
        let onlyRangeless = try #require(symbols["only_rangeless"])
        let symbolicator = try ModuleSymbolicator(debugFile: path)
        // The ranged unit answers (it has no function there: the symbol table names it, as llvm-symbolizer does).
        let first = symbolicator.symbolicate(covered + 1).frames
        #expect(first.map(\.function) == ["covered"])
        #expect(try #require(symbolicator.dwarfIndex).readSoFar.rangelessUnits == false)
        // An address no unit range covers is found in the rangeless unit's function (where llvm-symbolizer
        // has only the symbol table's name).
        let second = symbolicator.symbolicate(onlyRangeless + 1).frames
        #expect(second.map(\.function) == ["only_in_rangeless_unit"])
        // Asked again after the rangeless unit was read, the covered address keeps its answer.
        #expect(symbolicator.symbolicate(covered + 1).frames == first)
        let batch = symbolicator.records(for: [covered + 1, onlyRangeless + 1, covered])
        #expect(batch.records[batch.frames(of: 0)].map(symbolicator.frame) == first)
    }
}
