import Foundation
import Testing

@testable import CohorlySymbols

@Suite struct SymbolTableTests {
    /// The symbol-table fallback never names an address past the end of a symbol's section: a sizeless symbol
    /// (`_fini`) covers up to the next symbol or its section's end, not every address above it.
    @Test func anAddressOutsideEverySectionHasNoFunction() throws {
        let fixtures = try Fixtures.get()
        let path = fixtures.path("shop_release")
        let table = SymbolTable(file: try ElfFile(path: path))
        let fini = try #require(
            (0..<table.count).first { table.name(at: $0).map { String(cString: $0) } == "_fini" })
        let address = table.addresses[fini]
        #expect(!(try Reference.functions(path)).contains { $0.start == address })  // sizeless
        let module = try ModuleSymbolicator(debugFile: path)
        // Inside `_fini`'s section (.fini) it is named; far past it, nothing is.
        #expect(module.symbolicate(address + 1).frames.first?.function == "_fini")
        #expect(module.symbolicate(address + 10_000_000).frames.isEmpty)
        #expect(module.symbolicate(0xffff_ffff_0000).frames.isEmpty)
        #expect(table.lookup(address + 10_000_000) == nil)
    }

    /// The entries are read from the file (not its mapping) and converted from its class and byte order: a
    /// 32-bit little-endian and a 64-bit big-endian object give the functions `readelf` lists, with their
    /// names, ends and (for a local one) source file.
    @Test(arguments: ["i386-linux-gnu", "s390x-linux-gnu"])
    func readsEveryClassAndByteOrder(_ target: String) throws {
        let source = Scratch.path("symbols-\(target).c")
        let object = Scratch.path("symbols-\(target).o")
        defer {
            try? FileManager.default.removeItem(atPath: source)
            try? FileManager.default.removeItem(atPath: object)
        }
        try """
        int first(int x) { return x + 1; }
        int second(int x) { return first(x) * 2; }
        static int third(int x) { return second(x) - 1; }
        int main(int argc, char **argv) { return third(argc); }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        _ = try run(Fixtures.clang, ["--target=\(target)", "-O0", "-c", source, "-o", object])
        // readelf -sW: "Num: Value Size Type Bind Vis Ndx Name"; the first function sits at 0 (not a function
        // address a symbolicator answers), the others are the ones to find.
        let listed = try run("/usr/bin/readelf", ["-sW", object]).split(separator: "\n").compactMap {
            line -> (name: String, start: UInt64, size: UInt64, isLocal: Bool)? in
            let parts = line.split(separator: " ")
            guard parts.count == 8, parts[3] == "FUNC", let start = UInt64(parts[1], radix: 16),
                let size = UInt64(parts[2]), start != 0
            else { return nil }
            return (String(parts[7]), start, size, parts[4] == "LOCAL")
        }
        #expect(Set(listed.map(\.name)) == ["second", "third", "main"])
        let table = SymbolTable(file: try ElfFile(path: object))
        #expect(table.count == listed.count)
        for function in listed {
            let position = try #require(table.lookup(function.start + function.size - 1), "\(function.name)")
            #expect(table.name(at: position).map { String(cString: $0) } == function.name)
            #expect(table.addresses[position] == function.start)
            #expect(table.end(at: position) == function.start + function.size)
            let file = table.file(at: position).map { String(cString: $0) }
            #expect(file == (function.isLocal ? "symbols-\(target).c" : nil))
        }
    }

    /// Of several symbols at one address, the one kept is llvm-symbolizer's: the largest, and of equally large
    /// ones the last in the table (a sizeless label there never wins over a sized function).
    @Test func ofSymbolsAtOneAddressTheLargestAndThenTheLastIsKept() throws {
        let source = Scratch.path("aliases.c")
        let library = Scratch.path("libaliases.so")
        defer {
            try? FileManager.default.removeItem(atPath: source)
            try? FileManager.default.removeItem(atPath: library)
        }
        try """
        int first(int x) { return x * 3 + 1; }
        int second(int x) __attribute__((alias("first")));
        int third(int x) __attribute__((alias("first")));
        __asm__(".globl label\\n.type label, @function\\n.set label, first");
        """.write(toFile: source, atomically: true, encoding: .utf8)
        _ = try run(Fixtures.clang, ["-shared", "-fPIC", "-O1", source, "-o", library])
        // readelf -sW --dyn-syms excluded: the .symtab entries in table order, "Num: Value Size Type Bind Vis Ndx Name".
        let listed = try run("/usr/bin/readelf", ["-sW", library]).split(separator: "\n")
            .drop { !$0.contains("'.symtab'") }
            .compactMap { line -> (name: String, start: UInt64, size: UInt64)? in
                let parts = line.split(separator: " ")
                guard parts.count == 8, let start = UInt64(parts[1], radix: 16), let size = UInt64(parts[2]),
                    ["first", "second", "third", "label"].contains(parts[7])
                else { return nil }
                return (String(parts[7]), start, size)
            }
        #expect(Set(listed.map(\.name)) == ["first", "second", "third", "label"])
        #expect(Set(listed.map(\.start)).count == 1)
        let largest = try #require(listed.map(\.size).max())
        let expected = try #require(listed.last { $0.size == largest }?.name)
        let table = SymbolTable(file: try ElfFile(path: library))
        let position = try #require(table.lookup(listed[0].start))
        #expect(table.name(at: position).map { String(cString: $0) } == expected)
        let reference = try run(
            Fixtures.llvmSymbolizer, ["--obj=\(library)", "0x" + String(listed[0].start, radix: 16)])
        #expect(reference.split(separator: "\n").first.map(String.init) == expected)
    }
}
