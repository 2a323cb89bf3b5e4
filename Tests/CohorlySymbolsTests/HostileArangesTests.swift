import Foundation
import Testing

@testable import CohorlySymbols

/// A hostile `.debug_aranges` (the first source of the address→unit table when a file has it) is ignored or
/// bounded: every answer equals the answer for the same binary without the section, and nothing crashes or
/// hangs. The binary is gcc's (`-O2 -g`, which writes `.debug_aranges`) of two compile units, its section
/// rewritten by the test and put back with objcopy.
@Suite struct HostileArangesTests {
    /// The binary (two units), its `.debug_aranges` bytes, and the same binary without the section.
    struct Binary {
        let path: String
        let aranges: [UInt8]
        let withoutAranges: String
    }

    static let binary: Result<Binary, FixtureError> = {
        do {
            let directory = Scratch.path("hostile-aranges")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let second = directory + "/second.c"
            try """
            static inline int twice(int x) { return x * 2 + 1; }
            __attribute__((noinline)) int second_unit(int x) { return twice(x) ^ twice(x + 3); }
            __attribute__((noinline)) int second_unit_more(int x) { return second_unit(x) + twice(x); }
            """.write(toFile: second, atomically: true, encoding: .utf8)
            let path = directory + "/two-units"
            _ = try run("/usr/bin/gcc", ["-O2", "-g", Fixtures.sources + "/inline.c", second, "-o", path])
            let dumped = directory + "/aranges.bin"
            _ = try run(Fixtures.objcopy, ["--dump-section", ".debug_aranges=" + dumped, path, directory + "/scratch"])
            let without = directory + "/without-aranges"
            _ = try run(Fixtures.objcopy, ["--remove-section", ".debug_aranges", path, without])
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: dumped)))
            return .success(Binary(path: path, aranges: bytes, withoutAranges: without))
        } catch let error as FixtureError {
            return .failure(error)
        } catch {
            return .failure(.failed("\(error)"))
        }
    }()

    /// One set of the section: the unit it names and its (address, length) pairs.
    struct ArangeSet {
        var unitOffset: UInt32
        var pairs: [(UInt64, UInt64)]
    }

    /// The sets of a 64-bit little-endian `.debug_aranges` with 32-bit offsets (as gcc writes it).
    static func sets(_ bytes: [UInt8]) -> [ArangeSet] {
        func integer(_ at: Int, _ size: Int) -> UInt64 {
            (0..<size).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << UInt64(8 * $1) }
        }
        var result: [ArangeSet] = []
        var cursor = 0
        while cursor + 16 <= bytes.count {
            let end = cursor + 4 + Int(integer(cursor, 4))
            var set = ArangeSet(unitOffset: UInt32(integer(cursor + 6, 4)), pairs: [])
            var pair = cursor + 16
            while pair + 16 <= end, integer(pair, 8) != 0 || integer(pair + 8, 8) != 0 {
                set.pairs.append((integer(pair, 8), integer(pair + 8, 8)))
                pair += 16
            }
            result.append(set)
            cursor = end
        }
        return result
    }

    /// The bytes of a set: version 2, `addressSize` (pairs written 8 bytes wide whatever it says), no segments.
    static func bytes(of set: ArangeSet, addressSize: UInt8 = 8) -> [UInt8] {
        func little(_ value: UInt64, _ size: Int) -> [UInt8] {
            (0..<size).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        var body = little(2, 2) + little(UInt64(set.unitOffset), 4) + [addressSize, 0] + [0, 0, 0, 0]
        for (low, length) in set.pairs + [(0, 0)] { body += little(low, 8) + little(length, 8) }
        return little(UInt64(body.count), 4) + body
    }

    /// `binary` with its `.debug_aranges` replaced by `section`.
    static func variant(_ binary: Binary, _ name: String, _ section: [UInt8]) throws -> String {
        let directory = Scratch.path("hostile-aranges")
        let sectionPath = directory + "/" + name + ".bin"
        try Data(section).write(to: URL(fileURLWithPath: sectionPath))
        let path = directory + "/" + name
        _ = try run(Fixtures.objcopy, ["--update-section", ".debug_aranges=" + sectionPath, binary.path, path])
        return path
    }

    /// The frames of every function's entry and of addresses inside it (and a few outside every function).
    static func answers(_ path: String, at addresses: [UInt64]) throws -> [[SymbolicatedFrame]] {
        let symbolicator = try ModuleSymbolicator(debugFile: path)
        let one = addresses.map { symbolicator.symbolicate($0).frames }
        let batch = symbolicator.records(for: addresses)
        let batched = addresses.indices.map { batch.records[batch.frames(of: $0)].map(symbolicator.frame) }
        #expect(batched == one, "batch and single lookups differ in \(path)")
        return one
    }

    static func addresses(_ path: String) throws -> [UInt64] {
        var generator = SeededGenerator(state: 0xA5A5)
        var addresses: [UInt64] = [0, 1, 0xFFFF_FFFF_FFFF_FFFF]
        for function in try Reference.functions(path) where function.size > 0 {
            addresses.append(function.start)
            for _ in 0..<4 {
                addresses.append(function.start + UInt64.random(in: 0..<function.size, using: &generator))
            }
        }
        return addresses
    }

    static let hostileVariants: [String] = [
        "truncated", "set-past-debug-info", "overlapping-sets", "zero-length-tuples", "address-size-4",
        "huge-length", "huge-64-bit-length", "tombstones-only",
    ]

    /// The section as the variant `name` rewrites it.
    static func hostileSection(_ name: String, _ original: [UInt8]) -> [UInt8] {
        let sets = Self.sets(original)
        switch name {
        case "truncated": return Array(original.dropLast(5))
        case "set-past-debug-info":
            // The first set names a unit far past the end of `.debug_info`.
            var moved = sets
            moved[0].unitOffset = 0x7FFF_FF00
            return moved.flatMap { bytes(of: $0) }
        case "overlapping-sets":
            // The second unit's set lists the first unit's ranges instead of its own: two units claim them.
            var claimed = sets
            claimed[1].pairs = sets[0].pairs
            return claimed.flatMap { bytes(of: $0) }
        case "zero-length-tuples":
            // Every set: a run of empty tuples at each of its addresses, no real range.
            return sets.flatMap { set in
                bytes(
                    of: ArangeSet(
                        unitOffset: set.unitOffset, pairs: set.pairs.flatMap { Array(repeating: ($0.0, 0), count: 64) })
                )
            }
        case "address-size-4": return sets.flatMap { bytes(of: $0, addressSize: 4) }
        case "huge-length": return [0xF0, 0xFF, 0xFF, 0xFF] + original.dropFirst(4)
        case "huge-64-bit-length":
            return [0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F] + original
        default:
            // Linker tombstones (discarded code) in place of every address.
            return sets.flatMap { set in
                bytes(of: ArangeSet(unitOffset: set.unitOffset, pairs: set.pairs.map { (UInt64.max - 1, $0.1) }))
            }
        }
    }

    /// Not vacuous: gcc's section lists both units, and the index takes their ranges from it.
    @Test func theValidSectionGivesBothUnitsRanges() throws {
        let binary = try Self.binary.get()
        let sets = Self.sets(binary.aranges)
        #expect(sets.count == 2)
        #expect(sets.allSatisfy { !$0.pairs.isEmpty })
        let index = try #require(try ModuleSymbolicator(debugFile: binary.path).dwarfIndex)
        #expect(index.unitsFromAranges == 2)
        let addresses = try Self.addresses(binary.path)
        #expect(try Self.answers(binary.path, at: addresses) == Self.answers(binary.withoutAranges, at: addresses))
        // Rewritten by this test's writer, the valid section reads the same way (the writer is faithful).
        let rewritten = try Self.variant(binary, "rewritten", sets.flatMap { Self.bytes(of: $0) })
        #expect(try #require(try ModuleSymbolicator(debugFile: rewritten).dwarfIndex).unitsFromAranges == 2)
    }

    @Test(arguments: hostileVariants)
    func hostileSectionGivesTheAnswersWithoutIt(_ name: String) throws {
        let binary = try Self.binary.get()
        let path = try Self.variant(binary, name, Self.hostileSection(name, binary.aranges))
        let addresses = try Self.addresses(binary.path)
        let expected = try Self.answers(binary.withoutAranges, at: addresses)
        #expect(expected.contains { $0.first?.function?.contains("second_unit") == true })
        let answers = try Self.answers(path, at: addresses)
        for (index, address) in addresses.enumerated() where answers[index] != expected[index] {
            Issue.record("\(name): 0x\(String(address, radix: 16)): \(answers[index]) != \(expected[index])")
        }
    }

    /// Two units claiming one address: the whole section is set aside (neither unit's set is used), not only
    /// the later set.
    @Test func overlappingSetsAreSetAside() throws {
        let binary = try Self.binary.get()
        let path = try Self.variant(binary, "overlap-check", Self.hostileSection("overlapping-sets", binary.aranges))
        #expect(try #require(try ModuleSymbolicator(debugFile: path).dwarfIndex).unitsFromAranges == 0)
    }
}
