import CohorlyCollector
@testable import CohorlyCollectorCore
import CohorlySymbols
import Foundation
import Testing

/// The collector's symbol caches (DebugFileStore+SymbolCache.swift): made when a debug file is uploaded, taken
/// when uploaded (`cohorly debug-files upload --include-cache`) only for its own build, and what the collector's
/// symbolication then reads, with the same answers as the debug file's DWARF.
@Suite struct SymbolCacheStoreTests {
    @Test func uploadedDebugFileGetsACacheThatSymbolicationReads() throws {
        let program = try SplitProgram.get()
        let collector = try DebugFileStoreTests.collector()
        #expect(collector.debugFiles.symbolCache(buildId: program.buildId) == nil)
        let reply = try DebugFileStoreTests.upload(
            collector, contents(program.debug), buildId: program.buildId, kind: "debuginfo")
        #expect(reply.status == 201, "\(reply.text)")
        let cache = try #require(collector.debugFiles.symbolCache(buildId: program.buildId))
        let id = try #require(DebugId.buildId(hex: program.buildId))
        #expect(try SymbolCacheFile.buildId(at: cache.path) == id)
        let crashes = CrashQueries(store: collector.store, debugFiles: collector.debugFiles, extraDirectories: [])
        let module = try ModuleSymbolicator.open(
            codeFile: "/nowhere/prog", buildId: id, locator: crashes.locator(for: [id]))
        #expect(module.usesSymbolCache)
        let dwarf = try ModuleSymbolicator(debugFile: program.debug)
        var answered = 0
        let symbols = try SplitProgram.run("/usr/bin/nm", ["--defined-only", program.full])
        let starts = symbols.split(separator: "\n").filter { $0.contains(" T ") || $0.contains(" t ") }
            .compactMap { UInt64($0.prefix(16), radix: 16) }
        let low = try #require(starts.min())
        for address in stride(from: low, to: low + 0x400, by: 3) {
            let found = module.symbolicate(address)
            #expect(found == dwarf.symbolicate(address))
            if found.frames.first?.line ?? 0 > 0 { answered += 1 }
        }
        #expect(answered > 10)
    }

    /// An unstripped binary (sent once, as `executable`; its `debuginfo` is then attached by the check) gets its
    /// cache too; a stripped one has no DWARF to make one from.
    @Test func unstrippedExecutableGetsACache() throws {
        let program = try SplitProgram.get()
        let collector = try DebugFileStoreTests.collector()
        let stripped = try DebugFileStoreTests.upload(
            collector, contents(program.stripped), buildId: program.buildId, kind: "executable")
        #expect(stripped.status == 201, "\(stripped.text)")
        #expect(collector.debugFiles.symbolCache(buildId: program.buildId) == nil)
        let other = try DebugFileStoreTests.collector()
        let full = try DebugFileStoreTests.upload(
            other, contents(program.full), buildId: program.buildId, kind: "executable")
        #expect(full.status == 201, "\(full.text)")
        #expect(other.debugFiles.symbolCache(buildId: program.buildId) != nil)
    }

    /// A version 1 cache (zlib names, made before the names were zstd-compressed) stays the build's cache when its
    /// debug file arrives later, and symbolication reads it with the answers of the file's DWARF.
    @Test func versionOneCacheIsKeptAndRead() throws {
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz").path
        let file = seeds + "/objectinfo/seed-exe-dwarf5"
        let versionOne = contents(seeds + "/symcache/seed-v1-exe-dwarf5.symcache")
        #expect(versionOne[8] == 1)
        let buildId = try #require(try ObjectInfo(path: file).codeId)
        let collector = try DebugFileStoreTests.collector()
        let cache = try DebugFileStoreTests.upload(collector, versionOne, buildId: buildId, kind: "symcache")
        #expect(cache.status == 201, "\(cache.text)")
        let debug = try DebugFileStoreTests.upload(collector, contents(file), buildId: buildId, kind: "debuginfo")
        #expect(debug.status == 201, "\(debug.text)")
        let stored = try #require(collector.debugFiles.symbolCache(buildId: buildId))
        #expect(contents(stored.path) == versionOne)
        let id = try #require(DebugId.buildId(hex: buildId))
        let crashes = CrashQueries(store: collector.store, debugFiles: collector.debugFiles, extraDirectories: [])
        let module = try ModuleSymbolicator.open(
            codeFile: "/nowhere/seed", buildId: id, locator: crashes.locator(for: [id]))
        #expect(module.usesSymbolCache)
        let dwarf = try ModuleSymbolicator(debugFile: file)
        var named = 0
        for address in stride(from: dwarf.loadAddress, to: dwarf.loadAddress + 0x200, by: 1) {
            let found = module.symbolicate(address)
            #expect(found == dwarf.symbolicate(address))
            if found.frames.first?.function != nil { named += 1 }
        }
        #expect(named > 16)
    }

    @Test func uploadedCacheIsKeptOnlyForItsBuild() throws {
        let program = try SplitProgram.get()
        let collector = try DebugFileStoreTests.collector()
        let bytes = try SymbolCacheWriter.make(
            codeFile: program.full, locator: DebugFileLocator(searchPaths: [], debugRoots: [], debuginfod: nil))
        let other = String(repeating: "ab", count: 20)
        let refused = try DebugFileStoreTests.upload(collector, bytes, buildId: other, kind: "symcache")
        #expect(refused.status == 422)
        #expect(refused.text.contains("build id mismatch"))
        let elf = try DebugFileStoreTests.upload(
            collector, contents(program.full), buildId: program.buildId, kind: "symcache")
        #expect(elf.status == 422)
        let stored = try DebugFileStoreTests.upload(collector, bytes, buildId: program.buildId, kind: "symcache")
        #expect(stored.status == 201, "\(stored.text)")
        let cache = try #require(collector.debugFiles.symbolCache(buildId: program.buildId))
        #expect(contents(cache.path) == bytes)
    }
}
