import Foundation
import Testing

@testable import CohorlySymbols

/// The symbol-table fallback never names an address past the end of a symbol's section: a sizeless symbol
/// (`_fini`) covers up to the next symbol or its section's end, not every address above it.
@Suite struct SymbolTableTests {
    @Test func anAddressOutsideEverySectionHasNoFunction() throws {
        let fixtures = try Fixtures.get()
        let table = SymbolTable(file: try ElfFile(path: fixtures.path("shop_release")))
        let fini = try #require(table.symbols.first { String(cString: $0.name) == "_fini" })
        #expect(fini.size == 0)
        let module = try ModuleSymbolicator(debugFile: fixtures.path("shop_release"))
        // Inside `_fini`'s section (.fini) it is named; far past it, nothing is.
        #expect(module.symbolicate(fini.address + 1).frames.first?.function == "_fini")
        #expect(module.symbolicate(fini.address + 10_000_000).frames.isEmpty)
        #expect(module.symbolicate(0xffff_ffff_0000).frames.isEmpty)
        #expect(table.lookup(fini.address + 10_000_000) == nil)
    }
}
