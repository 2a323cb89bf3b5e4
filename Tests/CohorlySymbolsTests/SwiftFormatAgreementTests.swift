import CohorlySymbols
import Testing

/// Our answers against `llvm-symbolizer --inlines` on the toolchain's own `swift-format` (issue 42's benchmark
/// binary: ~57 MB, DWARF 5 with `.debug_names` and `.debug_rnglists`, ~1,300 compile units, Swift and C), on a
/// seeded sample of function entries and inner addresses spread over many units: same inline chain, raw names,
/// files, lines and columns.
@Suite struct SwiftFormatAgreementTests {
    static let swiftFormat = "/opt/swift/usr/bin/swift-format"

    @Test func matchesLLVMSymbolizerOnSwiftFormat() throws {
        let functions = try Reference.functions(Self.swiftFormat).filter { $0.size > 0 }
        try #require(functions.count > 10_000)
        var generator = SeededGenerator(state: 0x5F0_0042)
        var addresses: [UInt64] = []
        for round in 0..<300 {
            guard let function = functions.randomElement(using: &generator) else { continue }
            // One in three at the entry, the rest inside (where inlined code lies).
            addresses.append(
                round % 3 == 0
                    ? function.start : function.start + UInt64.random(in: 0..<function.size, using: &generator))
        }
        addresses = Array(Set(addresses)).sorted()
        let expected = try Reference.symbolize(Self.swiftFormat, addresses)
        try #require(expected.count == addresses.count)

        let symbolicator = try ModuleSymbolicator(debugFile: Self.swiftFormat)
        #expect(symbolicator.hasDWARF)
        var inlined = 0
        var mismatches: [String] = []
        for (address, reference) in zip(addresses, expected) {
            let ours = symbolicator.symbolicate(address).frames.map {
                Reference.Frame(
                    function: $0.rawFunction ?? "", file: $0.file ?? "", line: $0.line, column: $0.column)
            }
            if reference.count > 1 { inlined += 1 }
            if ours != reference && !ModuleSymbolicatorTests.tolerated(ours, reference) {
                mismatches.append("0x\(String(address, radix: 16)): ours \(ours) llvm \(reference)")
            }
        }
        #expect(
            mismatches.isEmpty,
            "\(mismatches.count) of \(addresses.count) differ: \(mismatches.prefix(4).joined(separator: "; "))")
        #expect(inlined > 10)
    }
}
