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
