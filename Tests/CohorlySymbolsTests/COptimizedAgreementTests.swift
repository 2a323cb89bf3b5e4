import CohorlySymbols
import Foundation
import Testing

/// Issue 42's "answers unchanged" on C: a generated C program of several units, built with clang at `-O2 -g`
/// (inlined helpers, loops, switches), once plainly and once with zstd-compressed debug sections (`-gz=zstd`).
/// On the plain file every frame equals LLVM 21's (the toolchain's `llvm-symbolizer`) where it answers, and
/// where it says `??:0:0` ours equals LLVM 14's (Debian's `llvm-symbolizer-14`). The toolchain's LLVM reads no
/// zstd (it says `??:0:0` everywhere in the compressed file): there ours equals binutils `addr2line`'s place
/// (the innermost file:line, the outermost function; binutils drops clang's inline chains) and, frame for frame,
/// ours on the plain file.
@Suite struct COptimizedAgreementTests {
    static let llvm14 = "/usr/bin/llvm-symbolizer-14"
    static let addr2line = "/usr/bin/addr2line"

    /// The two builds of the program, made once per test process.
    static let built: Result<(plain: String, zstd: String), FixtureError> = {
        do {
            return .success(try build())
        } catch let error as FixtureError {
            return .failure(error)
        } catch {
            return .failure(.failed("\(error)"))
        }
    }()

    /// Writes the sources, compiles them once and links them twice (plain, `-gz=zstd`).
    private static func build() throws -> (plain: String, zstd: String) {
        let directory = Scratch.path("c-optimized")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let files = 3
        let functions = 12
        var objects: [String] = []
        var main = "#include <stddef.h>\n"
        var calls = ""
        for file in 0..<files {
            var source = "#include <stddef.h>\n"
            for function in 0..<functions {
                let name = "\(file)_\(function)"
                source += """
                    static inline unsigned mix\(name)(unsigned x, unsigned y) {
                        for (int k = 0; k < (int)(y & 7); k++) x = x * 31u + (x >> \(function % 13 + 1));
                        return x ^ y;
                    }
                    __attribute__((noinline)) static unsigned leaf\(name)(const unsigned *v, size_t n) {
                        unsigned s = \(function);
                        for (size_t j = 0; j < n; j++) s = mix\(name)(s, v[j]) + (v[j] % \(function + 3) ? 1u : 2u);
                        return s;
                    }
                    unsigned entry\(name)(const unsigned *v, size_t n) {
                        if (n > \(function)) return leaf\(name)(v, n - 1) * 3u + mix\(name)((unsigned)n, v[0]);
                        switch (n % 4) {
                        case 0: return mix\(name)(1u, 2u);
                        case 1: return leaf\(name)(v, n);
                        default: return (unsigned)n;
                        }
                    }

                    """
                main += "unsigned entry\(name)(const unsigned *, size_t);\n"
                calls += "    s += entry\(name)(v, (size_t)argc * \(function));\n"
            }
            let path = directory + "/unit\(file).c"
            try source.write(toFile: path, atomically: true, encoding: .utf8)
            objects.append(path)
        }
        main += """
            int main(int argc, char **argv) {
                (void)argv;
                unsigned v[64];
                for (int i = 0; i < 64; i++) v[i] = (unsigned)(argc * i);
                unsigned s = 0;
            \(calls)    return (int)(s & 1);
            }

            """
        let mainPath = directory + "/main.c"
        try main.write(toFile: mainPath, atomically: true, encoding: .utf8)
        objects.append(mainPath)
        let plain = directory + "/c_optimized"
        let zstd = directory + "/c_optimized_zstd"
        // Compiled into objects once; the zstd link compresses the debug sections (the assembler of a clang
        // without zstd leaves them plain and says so on standard error).
        let compiled = objects.map {
            directory + "/" + URL(fileURLWithPath: $0).deletingPathExtension().lastPathComponent + ".o"
        }
        for (source, object) in zip(objects, compiled) {
            _ = try run(Fixtures.clang, ["-O2", "-g", "-c", source, "-o", object])
        }
        _ = try run(Fixtures.clang, ["-O2", "-g", "-Wl,--build-id"] + compiled + ["-o", plain])
        _ = try run(Fixtures.clang, ["-O2", "-g", "-gz=zstd", "-Wl,--build-id"] + compiled + ["-o", zstd])
        return (plain, zstd)
    }

    /// Every function entry and a seeded sample of inner addresses (where inlined code lies).
    static func addresses(_ path: String) throws -> [UInt64] {
        let functions = try Reference.functions(path).filter { $0.size > 0 }
        var generator = SeededGenerator(state: 0xC0_0042)
        var addresses = functions.map(\.start)
        for _ in 0..<600 {
            guard let function = functions.randomElement(using: &generator) else { continue }
            addresses.append(function.start + UInt64.random(in: 0..<function.size, using: &generator))
        }
        return Array(Set(addresses)).sorted()
    }

    /// Whether LLVM found no line: `??:0:0`, or `FILE:0:0` with the file of an `STT_FILE` symbol (a name from the
    /// symbol table may come with either).
    static func saysNoPlace(_ frames: [Reference.Frame]) -> Bool {
        frames.count <= 1 && (frames.first.map { $0.line == 0 } ?? true)
    }

    @Test func plainBuildMatchesLLVM21AndLLVM14WhereItSaysNothing() throws {
        let plain = try Self.built.get().plain
        let addresses = try Self.addresses(plain)
        let expected = try Reference.symbolize(plain, addresses)
        let older = try Reference.symbolize(plain, addresses, symbolizer: Self.llvm14)
        try #require(expected.count == addresses.count && older.count == addresses.count)
        let symbolicator = try ModuleSymbolicator(debugFile: plain)
        #expect(symbolicator.hasDWARF)
        // Where the toolchain's llvm-symbolizer says no place, the older one is the reference.
        let references = addresses.indices.map { Self.saysNoPlace(expected[$0]) ? older[$0] : expected[$0] }
        let answered = expected.filter { !Self.saysNoPlace($0) }.count
        let agreement = ReferenceAgreement(symbolicator, addresses, references)
        #expect(agreement.mismatches.isEmpty, "\(agreement.summary)")
        #expect(agreement.inlined > 50)
        #expect(answered > addresses.count * 9 / 10)
    }

    @Test func zstdBuildMatchesAddr2lineAndThePlainBuild() throws {
        let (plain, zstd) = try Self.built.get()
        let info = try ObjectInfo(path: zstd)
        try #require(info.compressedSections[".debug_info"] == .zstd, "clang -gz=zstd left .debug_info plain")
        #expect(!info.problems.contains(.zstdSections))
        let addresses = try Self.addresses(zstd)
        // The toolchain's LLVM cannot read the compressed sections: it knows no place at all.
        let expected = try Reference.symbolize(zstd, addresses)
        #expect(expected.allSatisfy(Self.saysNoPlace))
        let binutils = try Self.addr2line(zstd, addresses)
        try #require(binutils.count == addresses.count)
        let compressed = try ModuleSymbolicator(debugFile: zstd)
        let uncompressed = try ModuleSymbolicator(debugFile: plain)
        #expect(compressed.hasDWARF)
        var inlined = 0
        var mismatches: [String] = []
        for (index, address) in addresses.enumerated() {
            let ours = Reference.frames(compressed, address)
            if ours.count > 1 { inlined += 1 }
            let same = Reference.frames(uncompressed, address)
            let place = binutils[index]
            let innermost = ours.first.map { "\($0.file):\($0.line)" }
            let outermost = ours.last?.function
            if ours != same || innermost != place.innermost || outermost != place.function {
                mismatches.append(
                    "0x\(String(address, radix: 16)): ours \(ours) plain \(same) addr2line \(place)")
            }
        }
        #expect(
            mismatches.isEmpty,
            "\(mismatches.count) of \(addresses.count) differ: \(mismatches.prefix(4).joined(separator: "; "))")
        #expect(inlined > 50)
    }

    /// binutils `addr2line -f -i -a`: per address the outermost function and the innermost `file:line` (`:0`
    /// for a line it prints as `?`, an empty file for `??`).
    static func addr2line(_ path: String, _ addresses: [UInt64]) throws
        -> [(function: String, innermost: String)]
    {
        let arguments = ["-f", "-i", "-a", "-e", path] + addresses.map { "0x" + String($0, radix: 16) }
        let lines = try run(Self.addr2line, arguments).split(separator: "\n", omittingEmptySubsequences: false)
        var result: [(function: String, innermost: String)] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("0x") else {
                index += 1
                continue
            }
            index += 1
            var function = ""
            var innermost: String?
            while index + 1 < lines.count && !lines[index].hasPrefix("0x") {
                function = lines[index] == "??" ? "" : String(lines[index])
                var place = lines[index + 1].split(separator: " ").first.map(String.init) ?? ""
                if place.hasPrefix("??:") { place = String(place.dropFirst(2)) }
                if place.hasSuffix(":?") { place = String(place.dropLast()) + "0" }
                innermost = innermost ?? place
                index += 2
            }
            result.append((function, innermost ?? ":0"))
        }
        return result
    }
}
