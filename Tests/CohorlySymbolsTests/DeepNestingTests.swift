import Foundation
import Testing

@testable import CohorlySymbols

/// A compile unit whose DIEs nest 200,000 deep (hand-written DWARF, assembled with binutils `as`): the DIE
/// walks keep their open lists on the heap, so the index is built instead of the thread's stack overflowing —
/// a debug file is input we do not control.
@Suite struct DeepNestingTests {
    /// DWARF 4: a unit [0x1000, 0x1100) holding function `deep` [0x1000, 0x1010) and, inside it, `depth`
    /// nested lexical blocks (abbreviation 3: no attributes, has children).
    static func assembly(depth: Int) -> String {
        """
            .section .debug_abbrev,"",@progbits
            .uleb128 1
            .uleb128 0x11
            .byte 1
            .uleb128 0x11
            .uleb128 0x01
            .uleb128 0x12
            .uleb128 0x07
            .byte 0, 0
            .uleb128 2
            .uleb128 0x2e
            .byte 1
            .uleb128 0x03
            .uleb128 0x08
            .uleb128 0x11
            .uleb128 0x01
            .uleb128 0x12
            .uleb128 0x07
            .byte 0, 0
            .uleb128 3
            .uleb128 0x0b
            .byte 1
            .byte 0, 0
            .byte 0
            .section .debug_info,"",@progbits
            .long 2f - 1f
        1:
            .short 4
            .long 0
            .byte 8
            .uleb128 1
            .quad 0x1000
            .quad 0x100
            .uleb128 2
            .asciz "deep"
            .quad 0x1000
            .quad 0x10
            .rept \(depth)
            .uleb128 3
            .endr
            .rept \(depth)
            .byte 0
            .endr
            .byte 0
            .byte 0
        2:

        """
    }

    /// The object file assembled from ``assembly(depth:)``.
    static func object(depth: Int) throws -> String {
        let directory = Scratch.path("deep-nesting-\(depth)")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let source = directory + "/deep.s"
        let object = directory + "/deep.o"
        try assembly(depth: depth).write(toFile: source, atomically: true, encoding: .utf8)
        _ = try run("/usr/bin/as", ["--64", source, "-o", object])
        return object
    }

    @Test func deeplyNestedDIEsDoNotExhaustTheStack() throws {
        let module = try ModuleSymbolicator(debugFile: Self.object(depth: 200_000))
        #expect(module.symbolicate(0x1008).frames.map(\.function) == ["deep"])
        let walks = try #require(module.dwarfIndex).compareWalks(libdw: false)
        #expect(walks.count == 1 && walks.allSatisfy(\.linear), "the linear pass read the whole unit: \(walks)")
    }

    /// libdw's walk (the fallback) is iterative too, and agrees with the linear pass on a nested unit (a
    /// smaller one: libdw re-reads each subtree once per ancestor).
    @Test func bothWalksAgreeOnNestedBlocks() throws {
        let module = try ModuleSymbolicator(debugFile: Self.object(depth: 2_000))
        let walks = try #require(module.dwarfIndex).compareWalks()
        #expect(walks.count == 1 && walks.allSatisfy { $0.linear && $0.same }, "\(walks)")
    }
}
