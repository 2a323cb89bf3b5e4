import CohorlyCrashModel
import Foundation
import Testing

@testable import CohorlySymbols

/// The symbol cache (`SymbolCacheWriter`, `SymbolCacheReader`): the same answers as the symbolicator it was made
/// from, for every address of a fixture's code; refused when made for another build or damaged.
@Suite struct SymbolCacheTests {
    /// Writes the cache of `file` (its own DWARF or debug file) into the scratch directory; returns its path.
    static func makeCache(_ file: String, name: String) throws -> String {
        let bytes = try SymbolCacheWriter.make(
            codeFile: file, locator: DebugFileLocator(searchPaths: [], debuginfod: nil))
        let path = Scratch.path(name + ".symcache")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Every address from the first function's start to the last one's end (C at -O2 with inlining, C++
    /// templates, Swift -O and its stripped executable with a debuglink), cache against DWARF: names (raw and
    /// readable), inline chains, files, lines, columns, symbol offsets.
    @Test(arguments: ["inline_c", "inline_gcc", "templates", "shop_release", "shop_release.stripped"])
    func cacheAnswersEveryAddressAsDWARFDoes(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let file = fixtures.path(name)
        let cache = try Self.makeCache(file, name: name)
        let dwarf = try ModuleSymbolicator.open(
            codeFile: file, buildId: nil, locator: DebugFileLocator(searchPaths: [], debuginfod: nil))
        let cached = try ModuleSymbolicator(cache: cache, codeFile: file)
        #expect(cached.usesSymbolCache)
        // A stripped executable's functions are listed by its debug file.
        let functions = try Reference.functions(
            name.hasSuffix(".stripped") ? fixtures.path("shop_release.debug") : file
        )
        .filter { $0.size > 0 }
        let low = try #require(functions.map(\.start).min())
        let high = try #require(functions.map { $0.start + $0.size }.max())
        var differences: [String] = []
        var inlined = 0
        for address in low - 16..<high + 16 {
            let expected = dwarf.symbolicate(address)
            let found = cached.symbolicate(address)
            if expected.frames.count > 1 { inlined += 1 }
            if found != expected && differences.count < 4 {
                differences.append("0x\(String(address, radix: 16)): cache \(found.frames) dwarf \(expected.frames)")
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "; "))")
        #expect(high - low > 64)
        if name != "templates" { #expect(inlined > 0) }
        #expect(cached.sourceRoot == dwarf.sourceRoot)
    }

    /// The toolchain's `docc` (71 MB of Swift) keeps the DWARF of functions the linker dropped, at small
    /// addresses from 0: about 70 unit ranges overlap there, so the walk goes over to one sorted list after it
    /// has let go of the units it passed (a unit let go must give no bounds then: it once trapped on its old
    /// cursor). The cache is made, and answers seeded addresses as DWARF does.
    @Test func aCacheOfDoccWhoseDroppedFunctionsOverlapAnswersAsDWARFDoes() throws {
        let file = "/opt/swift/usr/bin/docc"
        let cache = try Self.makeCache(file, name: "docc")
        let dwarf = try ModuleSymbolicator(debugFile: file)
        let cached = try ModuleSymbolicator(cache: cache, codeFile: file)
        #expect(cached.usesSymbolCache)
        let functions = try Reference.functions(file).filter { $0.size > 0 }
        try #require(functions.count > 1000)
        var generator = SeededGenerator(state: 0xD0CC_0042)
        var differences: [String] = []
        var named = 0
        for _ in 0..<2_000 {
            guard let function = functions.randomElement(using: &generator) else { continue }
            let address = function.start + UInt64.random(in: 0..<function.size, using: &generator)
            let expected = dwarf.symbolicate(address)
            let found = cached.symbolicate(address)
            if expected.frames.first?.rawFunction != nil { named += 1 }
            if found != expected && differences.count < 4 {
                differences.append("0x\(String(address, radix: 16)): cache \(found.frames) dwarf \(expected.frames)")
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "; "))")
        #expect(named > 1_000)
    }

    /// Batches (what `symbolicate --exe` asks) give the cache's answers in the order asked.
    @Test func batchesFromTheCache() throws {
        let fixtures = try Fixtures.get()
        let file = fixtures.path("shop_release")
        let cached = try ModuleSymbolicator(cache: try Self.makeCache(file, name: "batch"), codeFile: file)
        let dwarf = try ModuleSymbolicator(debugFile: file)
        let functions = try Reference.functions(file).filter { $0.size > 0 }
        let addresses = functions.flatMap { [$0.start + $0.size / 2, $0.start] }
        let batch = cached.records(for: addresses)
        for (index, address) in addresses.enumerated() {
            let frames = batch.records[batch.frames(of: index)].map(cached.frame)
            #expect(frames == dwarf.symbolicate(address).frames)
        }
    }

    /// Every name is stored readable and raw (the readable one as `Demangler` makes it), and flagged when it is
    /// compiler-made code (`AppCode.isCompilerMade`) or a Swift runtime failure's frame.
    @Test(arguments: ["shop_release", "shop_debug"])
    func namesAreStoredDemangledAndFlagged(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let reader = try SymbolCacheReader(path: try Self.makeCache(fixtures.path(name), name: "names-" + name))
        #expect(reader.version == .zstd)
        var compilerMade = 0
        var failures = 0
        var swiftNames = 0
        for index in 0..<reader.nameCount {
            let strings = try #require(reader.strings(of: index))
            let readable = String(cString: strings.readable)
            let raw = String(cString: strings.raw)
            let flags = reader.flags(of: index)
            #expect(readable == Demangler.demangle(raw))
            #expect(flags.contains(.compilerMade) == AppCode.isCompilerMade(readable), "\(readable)")
            #expect(flags.contains(.runtimeFailure) == readable.hasPrefix("Swift runtime failure: "))
            if flags.contains(.compilerMade) { compilerMade += 1 }
            if flags.contains(.runtimeFailure) { failures += 1 }
            if Demangler.isSwiftMangled(raw) { swiftNames += 1 }
        }
        #expect(swiftNames > 10)
        #expect(compilerMade > 0)
        if name == "shop_release" { #expect(failures > 0) }
    }

    /// The committed tiny ELF seed `seed-exe-dwarf5` and its caches made by the writers of before: version 1 (zlib
    /// names, simplified forms too) and version 2 (zstd names, simplified forms too).
    static let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz").path
    static let seedFile = seeds + "/objectinfo/seed-exe-dwarf5"
    static let versionOneCache = seeds + "/symcache/seed-v1-exe-dwarf5.symcache"
    static let versionTwoCache = seeds + "/symcache/seed-v2-exe-dwarf5.symcache"

    /// The cache of the seed with names compressed by `compression`, as the writer makes it now.
    static func makeSeedCache(_ compression: SymbolCacheFormat.NameCompression, name: String) throws -> String {
        let bytes = try SymbolCacheWriter.make(
            try ModuleSymbolicator(debugFile: seedFile), buildId: try ObjectInfo(path: seedFile).buildId,
            compression: compression)
        let path = Scratch.path(name + ".symcache")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Caches of every format version answer every address as the file's DWARF does: versions 1 and 2 (the
    /// collector keeps the caches it made before: their simplified forms are skipped) and those made now,
    /// version 3 (zstd names) and version 4 (zlib names, where libzstd cannot be loaded).
    @Test func readsEveryVersion() throws {
        let caches = [
            Self.versionOneCache, Self.versionTwoCache, try Self.makeSeedCache(.zstd, name: "seed-v3"),
            try Self.makeSeedCache(.zlib, name: "seed-v4"),
        ]
        let readers = try caches.map { try SymbolCacheReader(path: $0) }
        #expect(readers.map(\.version) == [.zlibWithSimplifiedNames, .zstdWithSimplifiedNames, .zstd, .zlib])
        for reader in readers {
            #expect((0..<reader.nameCount).contains { reader.strings(of: $0).map { strlen($0.readable) > 0 } ?? false })
        }
        let symbolicators = try caches.map { try ModuleSymbolicator(cache: $0, codeFile: Self.seedFile) }
        let dwarf = try ModuleSymbolicator(debugFile: Self.seedFile)
        let functions = try Reference.functions(Self.seedFile).filter { $0.size > 0 }
        let low = try #require(functions.map(\.start).min())
        let high = try #require(functions.map { $0.start + $0.size }.max())
        var named = 0
        for address in low - 4..<high + 4 {
            let expected = dwarf.symbolicate(address)
            for (cache, symbolicator) in zip(caches, symbolicators) {
                #expect(symbolicator.symbolicate(address) == expected, "\(cache) 0x\(String(address, radix: 16))")
            }
            if expected.frames.first?.function != nil { named += 1 }
        }
        #expect(named > 16)
    }

    /// A symbolicator that made a cache (keeping its names mangled meanwhile) gives readable names afterwards, as
    /// one that made none.
    @Test func aSymbolicatorGivesReadableNamesAfterMakingACache() throws {
        let fixtures = try Fixtures.get()
        let file = fixtures.path("shop_release")
        let used = try ModuleSymbolicator(debugFile: file)
        _ = try SymbolCacheWriter.make(used, buildId: try ObjectInfo(path: file).buildId)
        let fresh = try ModuleSymbolicator(debugFile: file)
        let functions = try Reference.functions(file).filter { $0.size > 0 }
        var swiftNames = 0
        for function in functions {
            let address = function.start + function.size / 2
            let expected = fresh.symbolicate(address)
            #expect(used.symbolicate(address) == expected, "0x\(String(address, radix: 16))")
            if let raw = expected.frames.first?.rawFunction, Demangler.isSwiftMangled(raw) { swiftNames += 1 }
        }
        #expect(swiftNames > 10)
    }

    /// Where libzstd cannot be loaded, a cache of zstd names (versions 2 and 3) is refused at open, saying so and
    /// how to fix it; one of zlib names (versions 1 and 4) opens.
    @Test func refusesZstdNamesWithoutLibzstd() throws {
        let missing = "libzstd.so.1 could not be loaded: no such file"
        let current = try Self.makeCache(Self.seedFile, name: "seed-no-zstd")
        #expect {
            _ = try SymbolCacheReader(path: current, zstdLoadError: { missing })
        } throws: { error in
            guard case .badSymbolCache(let path, let reason) = error as? SymbolsError else { return false }
            return path == current && reason.contains("format version 3") && reason.contains(missing)
                && reason.contains("install libzstd") && reason.contains("written with zlib (version 4)")
        }
        #expect(throws: SymbolsError.self) {
            _ = try SymbolCacheReader(path: Self.versionTwoCache, zstdLoadError: { missing })
        }
        #expect(try SymbolCacheReader(path: Self.versionOneCache, zstdLoadError: { missing }).compression == .zlib)
        let versionFour = try Self.makeSeedCache(.zlib, name: "seed-no-zstd-v4")
        #expect(try SymbolCacheReader(path: versionFour, zstdLoadError: { missing }).version == .zlib)
    }

    /// A cache made for another build is refused, naming both files, both build ids and the command that makes
    /// the right one.
    @Test func refusesTheCacheOfAnotherBuild() throws {
        let fixtures = try Fixtures.get()
        let cache = try Self.makeCache(fixtures.path("inline_other"), name: "other")
        let file = fixtures.path("inline_c")
        #expect {
            _ = try ModuleSymbolicator(cache: cache, codeFile: file)
        } throws: { error in
            guard case .symbolCacheMismatch(let path, let named, let cacheId, let fileId) = error as? SymbolsError
            else { return false }
            let text = "\(error)"
            return path == cache && named == file && !cacheId.isEmpty && !fileId.isEmpty && cacheId != fileId
                && text.contains(cacheId) && text.contains(fileId)
                && text.contains("cohorly debug-files cache \(file) -o \(cache)")
        }
    }

    /// A file without a build id gets no cache (nothing to key it by).
    /// The writer's byte pre-check holds wherever ``AppCode/isCompilerMade(_:)`` does (it is asked only then), and
    /// spares the plain names.
    @Test func compilerMadePreCheckHoldsForEveryCompilerMadeName() {
        let compilerMade = [
            "partial apply for closure #1 in Foo.bar() -> ()",
            "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_guaranteed () -> (@out ())",
            "protocol witness for Swift.Equatable.== infix(A, A) -> Swift.Bool in conformance Foo.Bar : Swift.Equatable in Foo",
            "merged Foo.Bar.baz() -> ()",
            "outlined copy of Foo.Bar",
            "type metadata accessor for Foo.Bar",
            "specialized thunk for @escaping @callee_guaranteed () -> ()",
            "generic specialization <Swift.Int> of protocol witness for Foo.P.run() -> () in conformance Foo.S : Foo.P in Foo",
            "(1) await resume partial function for partial apply for closure #1 in Foo.run() async -> ()",
            "function signature specialization <Arg[0] = Dead> of merged Foo.Bar.baz() -> ()",
        ]
        let plain = [
            "Foo.Bar.baz() -> ()", "closure #1 in Foo.thunk(for:) -> ()", "Foo.witness(of:) -> Foo.merged",
            "generic specialization <Swift.Int> of Foo.Bar.outlined(thunk:) -> ()",
        ]
        for name in compilerMade {
            #expect(AppCode.isCompilerMade(name), "\(name)")
            #expect(SymbolCacheNames.mayBeCompilerMade(Array(name.utf8)), "\(name)")
        }
        for name in plain {
            #expect(!AppCode.isCompilerMade(name), "\(name)")
            #expect(!SymbolCacheNames.mayBeCompilerMade(Array(name.utf8)), "\(name)")
        }
        // The writer's answer read off the bytes equals the parse's, also where the parse strips words first or
        // the name is not ASCII.
        let tricky = [
            "protocol witness for generic specialization <Swift.Int> of Foo.bar() -> ()",
            "protocol witness for generic specialization <Swift.Int> of Foo.of() -> ()",
            "thunk for @escaping @callee_guaranteed (Foo<Swift.Int>) -> ()",
            "outlined copy of Foo.Ba\u{0301}r<Swift.Int>", "merged Foo.ünïcode<A>() -> ()",
            "(2) suspend resume partial function for thunk for Foo.run() async -> ()", "(x) thunk for Foo",
            "specialized merged Foo.bar() -> ()", "specialized Foo.bar() -> ()", "merged", "",
            "Foo.specialization <A> of thunk for x", "outlined specialization <A> thunk for x",
        ]
        for name in compilerMade + plain + tricky {
            #expect(SymbolCacheNames.isCompilerMade(Array(name.utf8)) == AppCode.isCompilerMade(name), "\(name)")
        }
    }

    /// The walk over the answer bounds, when it gives up windows for one sorted list of every unit's bounds (as
    /// it does for files whose unit ranges overlap too deep), makes the same cache as the windowed walk: forced
    /// from the first window on.
    @Test(arguments: ["inline_c", "templates", "shop_release", "shop_debug"])
    func theWalkWithoutWindowsMakesTheSameCache(_ name: String) throws {
        let file = try Fixtures.get().path(name)
        let buildId = try ObjectInfo(path: file).buildId
        let windowed = try SymbolCacheWriter.make(
            try ModuleSymbolicator(debugFile: file), buildId: buildId, compression: .zstd)
        for mostActiveSpans in [-1, 0] {
            let whole = try SymbolCacheWriter.make(
                try ModuleSymbolicator(debugFile: file), buildId: buildId, compression: .zstd,
                mostActiveSpans: mostActiveSpans)
            #expect(whole == windowed, "\(name), at most \(mostActiveSpans) ranges a window")
        }
    }

    @Test func noCacheWithoutBuildId() throws {
        let fixtures = try Fixtures.get()
        #expect(throws: SymbolsError.self) { try Self.makeCache(fixtures.path("inline_noid"), name: "noid") }
    }

    /// Damaged caches are refused at open (magic, version, header, tables outside the file) or answer nothing
    /// (row data cut): never a fault.
    @Test func refusesDamagedCaches() throws {
        let fixtures = try Fixtures.get()
        let file = fixtures.path("inline_c")
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try Self.makeCache(file, name: "good"))))
        func open(_ bytes: [UInt8], _ name: String) throws -> ModuleSymbolicator {
            let path = Scratch.path(name + ".symcache")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return try ModuleSymbolicator(cache: path, codeFile: file)
        }
        var magic = good
        magic[0] = 0x41
        var version = good
        version[8] = 9
        var table = good
        // blockStartsOffset (field 3) far past the end.
        table.replaceSubrange(16 + 3 * 8..<16 + 4 * 8, with: [0, 0, 0, 0, 0, 0, 0, 0x7f])
        for (bytes, reason) in [
            (magic, "magic"), (version, "format version 9, this reader reads 1 to 4"),
            (Array(good[0..<20]), "shorter than its header"),
            (table, "block starts outside the file"),
        ] {
            #expect {
                _ = try open(bytes, "bad")
            } throws: { error in
                guard case .badSymbolCache(_, let found) = error as? SymbolsError else { return false }
                return found.contains(reason)
            }
        }
        // Every prefix long enough for the header and its tables opens or is refused; none faults.
        for length in stride(from: SymbolCacheFormat.headerSize, to: good.count, by: max(1, good.count / 97)) {
            guard let symbolicator = try? open(Array(good[0..<length]), "cut") else { continue }
            for address in stride(from: UInt64(0x1000), to: 0x3000, by: 7) { _ = symbolicator.symbolicate(address) }
        }
    }
}
