import Foundation
import Testing

@testable import CohorlySymbols

/// The `objectinfo` and `symbolicator` fuzz targets' corpora (`fixtures/fuzz/<target>`: small ELF seeds and
/// every `crash-*` reproducer the fuzzer found) through the same entry points as `Fuzz/<target>/main.swift`.
@Suite struct ElfFuzzRegressionTests {
    private static func corpus(_ target: String) throws -> [(name: String, path: String, data: Data)] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz/\(target)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map {
            let url = directory.appendingPathComponent($0)
            return ($0, url.path, try Data(contentsOf: url))
        }
    }

    /// Little-endian integer of `count` bytes at `offset` (0 when out of range), as the harness reads it.
    private static func integer(_ data: Data, _ offset: Int, _ count: Int) -> UInt64 {
        guard offset >= 0, offset + count <= data.count else { return 0 }
        var value: UInt64 = 0
        for index in (0..<count).reversed() { value = value << 8 | UInt64(data[data.startIndex + offset + index]) }
        return value
    }

    @Test func objectInfoCorpus() throws {
        let inputs = try Self.corpus("objectinfo")
        #expect(inputs.count >= 8)
        var readable = 0
        for (_, path, _) in inputs {
            guard let info = try? ObjectInfo(path: path) else { continue }
            readable += 1
            _ = (info.codeId, info.debugId, info.features, info.problems, info.kind, info.arch)
        }
        #expect(readable >= 8)
    }

    @Test func symbolicatorCorpus() throws {
        let inputs = try Self.corpus("symbolicator")
        var named = 0
        for (_, path, data) in inputs {
            guard let module = try? ModuleSymbolicator(debugFile: path) else { continue }
            let is64 = data.count > 4 && data[data.startIndex + 4] == 2
            let entry = is64 ? Self.integer(data, 24, 8) : Self.integer(data, 24, 4)
            var addresses: [UInt64] = [module.loadAddress, Self.integer(data, data.count - 8, 8)]
            for step in 0..<6 { addresses.append(entry &+ UInt64(step * 8)) }
            for address in addresses {
                for isReturn in [false, true] {
                    let result = module.symbolicate(address, isReturnAddress: isReturn)
                    if "\(result)".contains("_start") { named += 1 }
                }
            }
        }
        // The seeds are real executables: their entry point is `_start`.
        #expect(named > 0)
    }

    /// The `symcache` target's corpus: each seed (caches of the tiny ELF seeds, of a C -O2 and a Swift -O program)
    /// opens and answers at its blocks' starts, as the harness asks; every `crash-*` input opens or is refused
    /// and never faults.
    @Test func symbolCacheCorpus() throws {
        let inputs = try Self.corpus("symcache")
        var answered = 0
        for (name, path, _) in inputs {
            guard let reader = try? SymbolCacheReader(path: path) else {
                #expect(!name.hasPrefix("seed-"), "\(name) is not readable")
                continue
            }
            let text = TextTable()
            var frames: [FrameRecord] = []
            for start in reader.blockStartAddresses(limit: 8) {
                for address in [start, start &+ 1, start &+ 17] {
                    frames.removeAll()
                    reader.lookup(address, into: &frames, text: text)
                    if frames.contains(where: { text.string($0.function) != nil }) { answered += 1 }
                }
            }
        }
        #expect(inputs.count >= 7)
        #expect(answered > 20)
    }
}
