import CohorlySymbols
import Foundation
import Testing

/// The symbol-table fallback never names an address past the end of a symbol's section: a sizeless symbol
/// (`_fini`) covers up to the next symbol or its section's end, not every address above it.
@Suite struct SymbolTableTests {
    @Test func anAddressOutsideEverySectionHasNoFunction() throws {
        let fixtures = try Fixtures.get()
        let module = try ModuleSymbolicator(debugFile: fixtures.path("shop_release"))
        let fini = try #require(try Self.symbol("_fini", in: fixtures.path("shop_release")))
        // Inside `_fini`'s section (.fini) it is named; far past it, nothing is.
        #expect(module.symbolicate(fini.address + 1).frames.first?.function == "_fini")
        #expect(module.symbolicate(fini.address + 10_000_000).frames.isEmpty)
        #expect(module.symbolicate(0xffff_ffff_0000).frames.isEmpty)
    }

    /// A symbol's address and type letter from `nm`.
    static func symbol(_ name: String, in path: String) throws -> (address: UInt64, type: String)? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nm")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3 && parts[2] == name, let address = UInt64(parts[0], radix: 16) {
                return (address, String(parts[1]))
            }
        }
        return nil
    }
}
