import Foundation
import Testing

@testable import CohorlySymbols

/// A function's inline tree is read when an address in it is first asked for; when the linear pass cannot read
/// the tree, libdw's walk reads it from the function's DIE. No input reaches that walk on its own (the linear
/// pass fails on a tree only where the unit's functions pass, stepping over the same bytes with the same
/// checks, failed first and gave the whole unit to libdw), so these tests make the index take it for every
/// tree and hold its answers to those of an index libdw's walk read whole.
@Suite struct InlineTreeFallbackTests {
    static let names = ["inline_c", "inline_gcc", "templates", "shop_release"]

    /// Every scope (ranges, call site, parent) the fallback reads is one libdw's whole walk finds, and no more.
    @Test(arguments: names)
    func treesReadByLibdwEqualTheWholeWalk(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let index = try #require(try ModuleSymbolicator(debugFile: fixtures.path(name)).dwarfIndex)
        let units = index.compareWalks(treesByLibdw: true)
        #expect(!units.isEmpty)
        #expect(units.allSatisfy { $0.linear }, "the functions pass gave up on a unit of \(name)")
        #expect(units.allSatisfy { $0.same })
    }

    /// At every function's entry and at random addresses inside it, the inline chain (names' DIEs and call
    /// sites) found through the fallback is libdw's.
    @Test(arguments: names)
    func fallbackAnswersEqualLibdws(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let path = fixtures.path(name)
        var generator = SeededGenerator(state: 0x7EE5)
        var addresses: [UInt64] = []
        for function in try Reference.functions(path) where function.size > 0 {
            addresses.append(function.start)
            for _ in 0..<8 {
                addresses.append(function.start + UInt64.random(in: 0..<function.size, using: &generator))
            }
        }
        let index = try #require(try ModuleSymbolicator(debugFile: path).dwarfIndex)
        let chains = index.innermostChainsWithTreesByLibdw(addresses)
        for (address, answer) in zip(addresses, chains) where answer.fallback != answer.libdw {
            Issue.record("\(name) 0x\(String(address, radix: 16)): \(answer.fallback) != \(answer.libdw)")
        }
        // Not vacuous: functions are found, and many addresses are inside inlined code.
        #expect(chains.filter { !$0.libdw.isEmpty }.count > addresses.count / 2)
        #expect(chains.filter { $0.fallback.count > 1 }.count > addresses.count / 20)
    }
}
