import CohorlySymbols
import Foundation
import Testing

/// `cohorly debug-files cache FILE -o CACHE` and `cohorly symbolicate --exe FILE --cache CACHE`: the same output
/// as from DWARF (text and JSON, full and simplified names), through the lean `cohorly-symbolicate` too; a
/// cache of another build refused with the file, the problem and the fix, exit 1.
@Suite struct SymbolCacheCommandTests {
    @Test func cacheAnswersAsDWARFDoes() throws {
        let fixtures = try CLIFixtures.get()
        let shop = fixtures.path("shop")
        let cache = Scratch.path("shop.symcache")
        let made = try CLI.run(["debug-files", "cache", shop, "-o", cache])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.isEmpty && made.stderr.isEmpty)
        let functions = try #require(try fixtures.symbol("main"))
        let trap = try fixtures.trapAddress()
        let addresses =
            (0..<64).map { "0x" + String(functions + UInt64($0 * 3), radix: 16) } + [
                "0x" + String(trap, radix: 16), "0x10",
            ]
        let input = addresses.joined(separator: "\n") + "\n"
        for options in [[], ["--json"], ["--simplified"]] {
            let dwarf = try CLI.run(["symbolicate", "--exe", shop] + options, input: input)
            let cached = try CLI.run(["symbolicate", "--exe", shop, "--cache", cache] + options, input: input)
            #expect(cached.stdout == dwarf.stdout, "\(options)")
            #expect(cached.status == dwarf.status)
            #expect(dwarf.stdout.contains("shop.swift"))
        }
    }

    /// Where libzstd cannot be loaded (a preloaded `dlopen` refuses it), `debug-files cache` writes the names with
    /// zlib (format version 4), which `symbolicate --cache` reads as it reads a zstd one (version 3, made where
    /// libzstd is), with the same output, and without loading libzstd; a version 3 cache is refused there with the
    /// file, the problem and the fix, exit 1.
    @Test func withoutLibzstdCachesAreMadeWithZlibAndZstdOnesRefused() throws {
        let fixtures = try CLIFixtures.get()
        let shop = fixtures.path("shop")
        let source = Scratch.path("no-zstd.c")
        try """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <string.h>
        void *dlopen(const char *file, int mode) {
            if (file != NULL && strstr(file, "libzstd") != NULL) return NULL;
            void *(*next)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
            return next(file, mode);
        }
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let shim = Scratch.path("no-zstd.so")
        let compiled = try CLI.run(
            ["-shared", "-fPIC", "-O1", source, "-o", shim, "-ldl"], executable: "/opt/swift/usr/bin/clang")
        #expect(compiled.status == 0, "\(compiled.stderr)")
        var environment = ProcessInfo.processInfo.environment
        environment["DEBUGINFOD_URLS"] = nil
        environment["LD_PRELOAD"] = shim
        let zlib = Scratch.path("shop-zlib.symcache")
        let zstd = Scratch.path("shop-zstd.symcache")
        let madeZlib = try CLI.run(["debug-files", "cache", shop, "-o", zlib], environment: environment)
        #expect(madeZlib.status == 0, "\(madeZlib.stderr)")
        #expect(try CLI.run(["debug-files", "cache", shop, "-o", zstd]).status == 0)
        func version(_ path: String) throws -> UInt8 { try Data(contentsOf: URL(fileURLWithPath: path))[8] }
        #expect(try version(zlib) == 4)
        #expect(try version(zstd) == 3)
        let main = try #require(try fixtures.symbol("main"))
        let input = (0..<32).map { "0x" + String(main + UInt64($0 * 5), radix: 16) }.joined(separator: "\n") + "\n"
        let dwarf = try CLI.run(["symbolicate", "--exe", shop], input: input)
        #expect(dwarf.stdout.contains("shop.swift"))
        for (cache, environment) in [(zlib, environment), (zlib, nil), (zstd, nil)] {
            let cached = try CLI.run(
                ["symbolicate", "--exe", shop, "--cache", cache], input: input, environment: environment)
            #expect(cached.stdout == dwarf.stdout, "\(cache) \(environment == nil ? "with" : "without") libzstd")
        }
        // A version 4 cache does not need libzstd, and is read without loading it.
        let (libraries, readZlib) = try LazyLibraryTests.loadedLibraries([
            "symbolicate", "--exe", shop, "--cache", zlib, "0x" + String(main, radix: 16),
        ])
        #expect(readZlib.status == 0, "\(readZlib.stderr.suffix(500))")
        #expect(libraries.contains("libdw.so.1") && !libraries.contains("libzstd.so.1"), "\(libraries.sorted())")
        let refused = try CLI.run(
            ["symbolicate", "--exe", shop, "--cache", zstd, "0x10"], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("cohorly: \(zstd): not a usable symbol cache (format version 3"))
        #expect(refused.stderr.contains("libzstd.so.1 could not be loaded"))
        #expect(refused.stderr.contains("install libzstd"))
    }

    @Test func refusesTheCacheOfAnotherBuild() throws {
        let fixtures = try CLIFixtures.get()
        let cache = Scratch.path("inline.symcache")
        #expect(try CLI.run(["debug-files", "cache", fixtures.path("inline"), "-o", cache]).status == 0)
        let shop = fixtures.path("shop")
        let refused = try CLI.run(["symbolicate", "--exe", shop, "--cache", cache, "0x10"])
        #expect(refused.status == 1)
        #expect(refused.stdout.isEmpty)
        let id = try #require(try ObjectInfo(path: shop).codeId)
        #expect(refused.stderr.contains("cohorly: \(cache): symbol cache of build id "))
        #expect(refused.stderr.contains("but \(shop) has build id \(id): refused"))
        #expect(refused.stderr.contains("cohorly debug-files cache \(shop) -o \(cache)"))
        let usage = try CLI.run(["symbolicate", "--cache", cache, "report.json"])
        #expect(usage.status == 2)
        let noOutput = try CLI.run(["debug-files", "cache", shop])
        #expect(noOutput.status == 2 && noOutput.stderr.contains("missing -o CACHE"))
    }
}
