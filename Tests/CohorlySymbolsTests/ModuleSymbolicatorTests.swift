import CohorlySymbols
import Foundation
import Testing

/// Our answers against `llvm-symbolizer --inlines` for every function entry and random addresses inside
/// functions: same function (raw linkage name), file, line, column and inline depth.
@Suite struct ModuleSymbolicatorTests {
    static let binaries = [
        "inline_c", "inline_gcc", "templates", "shop_debug", "shop_release", "inline_zlib",
        "inline_zlib_gnu", "inline_zstd",
        "inline_c.stripped", "shop_release.stripped",
    ]

    @Test(arguments: binaries)
    func matchesLLVMSymbolizer(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let path = fixtures.path(name)
        // Entries and inner addresses come from the unstripped file (the stripped one has no .symtab).
        let unstripped = path.hasSuffix(".stripped") ? String(path.dropLast(".stripped".count)) : path
        let functions = try Reference.functions(unstripped)
        #expect(functions.count >= 3)
        var generator = SeededGenerator(state: 0xC0FFEE)
        var addresses = functions.map(\.start)
        for _ in 0..<400 {
            guard let function = functions.randomElement(using: &generator), function.size > 0 else {
                continue
            }
            addresses.append(function.start + UInt64.random(in: 0..<function.size, using: &generator))
        }
        addresses = Array(Set(addresses)).sorted()
        // LLVM 18+ dropped `.zdebug` (zlib-gnu) support, and the toolchain's LLVM reads no zstd: the uncompressed
        // twin is the oracle.
        let oracle = name == "inline_zlib_gnu" || name == "inline_zstd" ? fixtures.path("inline_c") : path
        let expected = try Reference.symbolize(oracle, addresses)
        try #require(expected.count == addresses.count)

        let symbolicator = try ModuleSymbolicator.open(
            codeFile: path, buildId: nil, locator: DebugFileLocator(debuginfod: nil))
        if name != "shop_release.stripped" && name != "inline_c.stripped" {
            #expect(symbolicator.debugFile.path == path)
        } else {
            #expect(symbolicator.debugFile.path == unstripped + ".debug")
        }
        #expect(symbolicator.hasDWARF)
        let agreement = ReferenceAgreement(symbolicator, addresses, expected)
        #expect(agreement.mismatches.count == 0, "\(name): \(agreement.summary)")
        // The fixtures are built so that inlining happens: the comparison covers inline chains.
        #expect(agreement.inlined > 0)
    }

    /// Two known differences where llvm-symbolizer knows less than the file says:
    /// - a stripped binary's addresses without DWARF (`_start`): llvm-symbolizer only reads the stripped
    ///   binary's own symbols and prints no name; we also use the debug file's `.symtab`;
    /// - gcc's `foo.cold` split parts: DWARF puts them in `foo`'s ranges (our answer), llvm-symbolizer prints
    ///   the `foo.cold` symbol.
    static func tolerated(_ ours: [Reference.Frame], _ reference: [Reference.Frame]) -> Bool {
        guard ours.count == reference.count, let last = ours.last, let other = reference.last else {
            return false
        }
        if reference.count == 1 && other.function.isEmpty && other.file.isEmpty && other.line == 0 {
            return last.line == 0  // llvm-symbolizer knows nothing; we add the debug file's symbol (and STT_FILE)
        }
        let sameLines = zip(ours, reference).allSatisfy { $0.file == $1.file && $0.line == $1.line }
        return sameLines && other.function == last.function + ".cold"
    }

    @Test func symbolTableFallbackWithoutDWARF() throws {
        // A toolchain binary without debug info: names and offsets from .symtab, like llvm-symbolizer.
        let path = "/opt/swift/usr/bin/swift-demangle"
        let functions = try Reference.functions(path).filter { $0.size > 4 }
        let picked = stride(from: 0, to: functions.count, by: max(1, functions.count / 300)).map {
            functions[$0]
        }
        let addresses = picked.flatMap { [$0.start, $0.start + $0.size / 2] }
        let expected = try Reference.symbolize(path, addresses)
        let symbolicator = try ModuleSymbolicator(debugFile: path)
        #expect(!symbolicator.hasDWARF)
        for (index, address) in addresses.enumerated() {
            let frames = symbolicator.symbolicate(address).frames
            #expect(frames.count == 1)
            #expect(frames.first?.rawFunction == expected[index].first?.function)
            let start = picked[index / 2].start
            #expect(frames.first?.symbolOffset == address - start)
        }
    }

    @Test func returnAddressesLookUpTheCallInstruction() throws {
        let fixtures = try Fixtures.get()
        let path = fixtures.path("inline_c")
        let symbolicator = try ModuleSymbolicator(debugFile: path)
        let functions = try Reference.functions(path)
        // The address right after a function's first byte, as a return address, resolves like the first byte.
        for function in functions where function.size > 1 {
            let asReturn = symbolicator.symbolicate(function.start + 1, isReturnAddress: true)
            let exact = symbolicator.symbolicate(function.start)
            #expect(asReturn.address == function.start)
            #expect(asReturn.frames == exact.frames)
        }
    }

    @Test func swiftNamesAreDemangledAndTrapsCarryTheirReason() throws {
        let fixtures = try Fixtures.get()
        let path = fixtures.path("shop_release")
        let symbolicator = try ModuleSymbolicator(debugFile: path)
        let functions = try Reference.functions(path)
        var names: Set<String> = []
        var failures: Set<String> = []
        for function in functions {
            for offset in 0..<function.size {
                let result = symbolicator.symbolicate(function.start + offset)
                names.formUnion(result.frames.compactMap(\.function))
                if let reason = result.swiftRuntimeFailure { failures.insert(reason) }
            }
        }
        #expect(
            names.contains("shop.Cart.checkout(discount: Swift.Int) -> Swift.Int"), "\(names.sorted())")
        #expect(names.contains("shop.Item.total() -> Swift.Int"))
        #expect(failures.contains("Division by zero"))
    }

    @Test func cxxNamesAreDemangled() throws {
        let fixtures = try Fixtures.get()
        let path = fixtures.path("templates")
        let symbolicator = try ModuleSymbolicator(debugFile: path)
        let names = Set(
            try Reference.functions(path).flatMap {
                symbolicator.symbolicate($0.start).frames.compactMap(\.function)
            })
        #expect(names.contains("shop::pricing::Cart::checkout() const"))
        #expect(
            names.contains { $0.hasPrefix("long shop::pricing::accumulate<long>(std::vector<long") })
    }

    @Test func zstdSectionsAreRead() throws {
        // elfutils 0.188 cannot read them: they are decompressed in memory (libzstd) before libdw opens the file.
        let fixtures = try Fixtures.get()
        let path = fixtures.path("inline_zstd")
        let info = try ObjectInfo(path: path)
        #expect(info.compressedSections[".debug_info"] == .zstd)
        #expect(!info.problems.contains(.zstdSections))
        // The answers: matchesLLVMSymbolizer("inline_zstd").
        #expect(try ModuleSymbolicator(debugFile: path).hasDWARF)
    }
}
