import Foundation
import Testing

@testable import CohorlySymbols

/// The linear DIE pass (DieScanner) and libdw's child/sibling walk find exactly the same scopes.
@Suite struct UnitIndexTests {
    @Test(arguments: [
        "inline_c", "inline_gcc", "templates", "shop_debug", "shop_release", "inline_zlib",
        "inline_zlib_gnu",
    ])
    func linearPassEqualsLibdwWalk(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let symbolicator = try ModuleSymbolicator(debugFile: fixtures.path(name))
        let index = try #require(symbolicator.dwarfIndex)
        let units = index.compareWalks()
        #expect(!units.isEmpty)
        #expect(units.allSatisfy { $0.linear }, "the linear pass gave up on a unit of \(name)")
        #expect(units.allSatisfy { $0.same })
    }

    /// A scope's name as the scanner reads it from its name DIE (its abstract origin when it names nothing
    /// itself) is the one libdw's `dwarf_attr_integrate` gives. The scanner reads swiftc's names (DWARF 4:
    /// `.debug_str` offsets, references inside the unit) itself; clang's and gcc's DWARF 5 (`DW_FORM_strx`) it
    /// leaves to libdw.
    @Test(arguments: [
        "inline_c", "inline_gcc", "templates", "shop_debug", "shop_release", "inline_zlib",
        "inline_zlib_gnu",
    ])
    func scannerNamesEqualLibdwNames(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let symbolicator = try ModuleSymbolicator(debugFile: fixtures.path(name))
        let names = try #require(symbolicator.dwarfIndex).compareNames()
        #expect(!names.isEmpty)
        let differing = names.filter { $0.scanner != $0.libdw }
        #expect(differing.isEmpty, "\(differing.count) of \(names.count) names differ in \(name)")
        if name.hasPrefix("shop") {
            #expect(names.filter(\.readItself).count * 10 >= names.count * 9, "libdw read the names of \(name)")
        }
        #expect(names.contains { $0.scanner != nil })
    }

    /// Line programs decoded by this package (`LineProgram`: swiftc's DWARF 4, clang's and gcc's DWARF 5, the
    /// zlib-compressed sections once libdw has inflated them) give libdw's rows and file names for every unit;
    /// on the toolchain's swift-format, every 16th of its ~1,300 units.
    @Test(arguments: [
        "inline_c", "inline_gcc", "templates", "shop_debug", "shop_release", "inline_zlib",
        "inline_zlib_gnu", "swift-format",
    ])
    func decodedLineProgramsEqualLibdws(_ name: String) throws {
        let path = name == "swift-format" ? SwiftFormatAgreementTests.swiftFormat : try Fixtures.get().path(name)
        let symbolicator = try ModuleSymbolicator(debugFile: path)
        let units = try #require(symbolicator.dwarfIndex).compareLinePrograms(stride: name == "swift-format" ? 16 : 1)
        #expect(!units.isEmpty)
        let leftToLibdw = units.filter { !$0.decoded }.count
        let differing = units.filter { !$0.same }.count
        #expect(leftToLibdw == 0, "libdw read \(leftToLibdw) line programs of \(name)")
        #expect(differing == 0, "\(differing) of \(units.count) units differ in \(name)")
    }

    /// Entering a unit costs the function asked for, not the unit: one address reads the inline tree of its
    /// function only, and the units without ranges of their own (swift-format's ~900 units of imported C modules)
    /// are read only for an address no unit range covers.
    @Test func oneAddressReadsOneInlineTreeAndNoRangelessUnit() throws {
        let symbolicator = try ModuleSymbolicator(debugFile: SwiftFormatAgreementTests.swiftFormat)
        // A function of SwiftFormat's own (in a Swift unit with ranges), from the symbol table.
        let symbols = try run("/usr/bin/nm", ["-S", "--defined-only", SwiftFormatAgreementTests.swiftFormat])
        let function = try #require(
            symbols.split(separator: "\n").lazy.filter { $0.contains(" T $s11SwiftFormat") }
                .compactMap { line -> (start: UInt64, size: UInt64)? in
                    let parts = line.split(separator: " ")
                    guard let start = UInt64(parts[0], radix: 16), let size = UInt64(parts[1], radix: 16), size > 64
                    else { return nil }
                    return (start, size)
                }.first)
        let frame = symbolicator.symbolicate(function.start + function.size / 2)
        #expect(frame.frames.first?.function != nil)
        let index = try #require(symbolicator.dwarfIndex)
        let after = index.readSoFar
        #expect(after.trees == 1)
        #expect(after.functions > 10, "one unit indexed: its functions' ranges")
        #expect(!after.rangelessUnits)
        // An address outside every unit (before the first function) reads them.
        _ = symbolicator.symbolicate(1)
        #expect(index.readSoFar.rangelessUnits)
    }

    /// gcc writes `.debug_aranges`: the address→unit table takes each unit's ranges from it, and they equal the
    /// unit's own `DW_AT_low_pc`/`high_pc`/`ranges`.
    @Test func arangesGiveTheUnitsOwnRanges() throws {
        let fixtures = try Fixtures.get()
        let symbolicator = try ModuleSymbolicator(debugFile: fixtures.path("inline_gcc"))
        let index = try #require(symbolicator.dwarfIndex)
        #expect(index.unitsFromAranges > 0)
        let units = index.compareArangesWithUnitRanges()
        #expect(!units.isEmpty)
        #expect(units.allSatisfy { $0 })
    }

    /// The first address asked in a function is answered by walking down its inline tree, later ones by its
    /// flat map: both give the same innermost scope for every function entry and random inner address.
    @Test(arguments: ["inline_c", "inline_gcc", "templates", "shop_release"])
    func walkingDownEqualsFlatMap(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let functions = try Reference.functions(fixtures.path(name))
        var generator = SeededGenerator(state: 0x1A2B)
        var addresses = functions.map(\.start)
        for function in functions where function.size > 1 {
            for _ in 0..<8 {
                addresses.append(function.start + UInt64.random(in: 0..<function.size, using: &generator))
            }
        }
        let symbolicator = try ModuleSymbolicator(debugFile: fixtures.path(name))
        let answers = try #require(symbolicator.dwarfIndex).innermostBothWays(addresses)
        #expect(answers.count > addresses.count / 2)
        let differing = answers.filter { $0.walkingDown != $0.map }
        #expect(differing.isEmpty, "\(differing.prefix(3))")
        // Not vacuous: many addresses are inside inlined code (their innermost scope is not their function).
        #expect(answers.filter { $0.map != $0.root }.count > addresses.count / 20)
    }
}
