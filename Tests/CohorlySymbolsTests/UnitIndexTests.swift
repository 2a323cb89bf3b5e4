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
}
