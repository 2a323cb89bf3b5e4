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
