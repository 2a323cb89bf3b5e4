import Foundation
import Testing

@testable import CohorlySymbols

/// Past ``TextTable/readableNamesLimit`` a batch tool drops the readable names it made and makes again those
/// asked for again: what it prints stays the same, and what it keeps stays bounded.
@Suite struct ReadableNameLimitTests {
    @Test func droppedNamesAreMadeAgainWhenAskedFor() throws {
        let mangled = (0..<300).compactMap { strdup("$s4main\("Thing\($0)".utf8.count)Thing\($0)V3runyS2iF") }
        defer { mangled.forEach { free($0) } }
        let text = TextTable()
        text.readableNamesLimit = 0
        text.defersDemangling = true
        let numbers = mangled.map { text.add(demangling: $0) }
        text.demanglePending()
        text.defersDemangling = false
        #expect(text.readableNamesSize > 0)
        text.dropReadableNamesOverLimit()
        #expect(text.readableNamesSize == 0)
        // Asked for again in a batch: made on the background thread, read through a view.
        text.defersDemangling = true
        for number in numbers.prefix(200) { text.revive(number) }
        text.demanglePending()
        text.defersDemangling = false
        text.withView { view in
            for (index, number) in numbers.prefix(200).enumerated() {
                #expect(
                    String(decoding: view[number], as: UTF8.self) == "main.Thing\(index).run(Swift.Int) -> Swift.Int")
            }
        }
        // Asked for as a string: made at once.
        #expect(text.string(numbers[250]) == "main.Thing250.run(Swift.Int) -> Swift.Int")
    }

    @Test func batchesPrintTheSameNamesWithinTheLimit() throws {
        let fixtures = try Fixtures.get()
        let path = fixtures.path("shop_release")
        let functions = try Reference.functions(path)
        let starts = functions.map(\.start)
        let halves = [Array(starts.prefix(starts.count / 2)), Array(starts.suffix(from: starts.count / 2))]

        /// The names of a batch's frames as the text writer reads them (through a view, right after it).
        func names(_ module: ModuleSymbolicator, _ addresses: [UInt64]) -> [String] {
            let batch = module.records(for: addresses)
            return module.text.withView { view in
                addresses.indices.flatMap { index in
                    batch.records[batch.frames(of: index)].map { String(decoding: view[$0.function], as: UTF8.self) }
                }
            }
        }
        let unlimited = try ModuleSymbolicator(debugFile: path)
        let expected = halves.map { names(unlimited, $0) }
        let oneHalf = try ModuleSymbolicator(debugFile: path)
        _ = names(oneHalf, halves[0])

        let limited = try ModuleSymbolicator(debugFile: path)
        limited.text.readableNamesLimit = 0
        #expect(names(limited, halves[0]) == expected[0])
        #expect(names(limited, halves[1]) == expected[1])
        #expect(names(limited, halves[0]) == expected[0])  // dropped after the first batch, made again
        // Only the last batch's names are kept; without a limit, both halves' are.
        #expect(limited.text.readableNamesSize == oneHalf.text.readableNamesSize)
        #expect(unlimited.text.readableNamesSize > oneHalf.text.readableNamesSize)
        #expect(expected[0].contains { $0.contains("Swift.") })  // Swift names, demangled
    }
}
