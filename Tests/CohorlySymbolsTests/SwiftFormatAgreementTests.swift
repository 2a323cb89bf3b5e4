import Foundation
import Testing

@testable import CohorlySymbols

/// Our answers against `llvm-symbolizer --inlines` on the toolchain's own `swift-format` (issue 42's benchmark
/// binary: ~57 MB, DWARF 5 with `.debug_names` and `.debug_rnglists`, ~1,300 compile units, Swift and C) and on
/// a C `-O2 -g` binary with inlining, on a seeded sample of function entries and inner addresses: same inline
/// chain, raw names, files, lines and columns — from DWARF, and from a symbol cache made of the same file
/// (`cohorly debug-files cache`).
@Suite struct SwiftFormatAgreementTests {
    static let swiftFormat = "/opt/swift/usr/bin/swift-format"

    /// swift-format's symbol cache, made once per test process, and how many of its units the writer left
    /// indexed.
    struct MadeCache: Sendable {
        let path: String
        let unitCount: Int
        let unitsIndexedAfter: Int
    }

    static let swiftFormatCache: Result<MadeCache, FixtureError> = {
        do {
            let symbolicator = try ModuleSymbolicator(debugFile: swiftFormat)
            let bytes = try SymbolCacheWriter.make(symbolicator, buildId: try ObjectInfo(path: swiftFormat).buildId)
            let path = Scratch.path("swift-format.symcache")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let index = symbolicator.dwarfIndex
            return .success(
                MadeCache(
                    path: path, unitCount: index?.unitCount ?? 0, unitsIndexedAfter: index?.indexedUnitCount ?? 0))
        } catch {
            return .failure(.failed("\(error)"))
        }
    }()

    /// The writer lets go of each unit once its walk has passed the unit's ranges, so its memory serves the units
    /// after it: of swift-format's units only the last few stay indexed.
    @Test func theCacheWriterLetsGoOfTheUnitsItPassed() throws {
        let made = try Self.swiftFormatCache.get()
        #expect(made.unitCount > 1000)
        #expect(made.unitsIndexedAfter < 10)
    }

    @Test(arguments: [false, true]) func matchesLLVMSymbolizerOnSwiftFormat(cache: Bool) throws {
        let cachePath = cache ? try Self.swiftFormatCache.get().path : nil
        try Self.expectAgreement(Self.swiftFormat, cache: cachePath, samples: 300, seed: 0x5F0_0042)
    }

    @Test(arguments: [false, true]) func matchesLLVMSymbolizerOnOptimizedC(cache: Bool) throws {
        let file = try Fixtures.get().path("inline_c")
        let cachePath = cache ? try SymbolCacheTests.makeCache(file, name: "agreement-inline_c") : nil
        try Self.expectAgreement(file, cache: cachePath, samples: 200, seed: 0xC0_0042, minimumInlined: 3)
    }

    /// Symbolicates `samples` seeded addresses of `file` (a third at function entries, the rest inside) with
    /// the symbolicator (reading `cache` when given) and with llvm-symbolizer, and expects the same frames.
    static func expectAgreement(
        _ file: String, cache: String?, samples: Int, seed: UInt64, minimumInlined: Int = 10
    ) throws {
        let functions = try Reference.functions(file).filter { $0.size > 0 }
        try #require(functions.count > 2)
        var generator = SeededGenerator(state: seed)
        var addresses: [UInt64] = []
        for round in 0..<samples {
            guard let function = functions.randomElement(using: &generator) else { continue }
            // One in three at the entry, the rest inside (where inlined code lies).
            addresses.append(
                round % 3 == 0
                    ? function.start : function.start + UInt64.random(in: 0..<function.size, using: &generator))
        }
        addresses = Array(Set(addresses)).sorted()
        let expected = try Reference.symbolize(file, addresses)
        try #require(expected.count == addresses.count)

        let symbolicator =
            if let cache { try ModuleSymbolicator(cache: cache, codeFile: file) } else {
                try ModuleSymbolicator(debugFile: file)
            }
        #expect(symbolicator.hasDWARF)  // DWARF's lines and inline chains, read directly or from the cache made of them
        #expect(symbolicator.usesSymbolCache == (cache != nil))
        let agreement = ReferenceAgreement(symbolicator, addresses, expected)
        #expect(agreement.mismatches.isEmpty, "\(agreement.summary)")
        #expect(agreement.inlined >= minimumInlined)
    }
}
