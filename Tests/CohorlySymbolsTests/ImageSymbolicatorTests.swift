import CohorlySymbols
import Foundation
import Testing

/// Absolute addresses of a crashed process → module → file address → frames.
@Suite struct ImageSymbolicatorTests {
    static func function(_ name: String, in path: String) throws -> UInt64 {
        let output = try run("/usr/bin/nm", [path])
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 3 && parts[2] == name, let value = UInt64(parts[0], radix: 16) {
                return value
            }
        }
        throw FixtureError.failed("no \(name) in \(path)")
    }

    @Test func pieAndNonPieModulesAtTheirBases() throws {
        let fixtures = try Fixtures.get()
        let pie = fixtures.path("inline_c")
        let nopie = fixtures.path("inline_nopie")
        let pieBase: UInt64 = 0x5555_5555_4000
        let nopieBase: UInt64 = 0x40_0000  // a non-PIE executable is loaded at its own addresses
        let images = [
            LoadedImage(
                path: nopie, base: nopieBase, size: 0x10000, buildId: try ObjectInfo(path: nopie).buildId),
            LoadedImage(
                path: pie, base: pieBase, size: 0x10000, buildId: try ObjectInfo(path: pie).buildId),
        ]
        let symbolicator = ImageSymbolicator(images: images, locator: DebugFileLocator(debuginfod: nil))
        let pieCompute = try Self.function("compute", in: pie)
        let nopieCompute = try Self.function("compute", in: nopie)
        #expect(nopieCompute > 0x40_0000)

        let inPie = symbolicator.symbolicate(pieBase + pieCompute, isReturnAddress: false)
        #expect(inPie.fileAddress == pieCompute)
        #expect(inPie.result?.frames.last?.function == "compute")
        #expect(inPie.imageIndex.map { symbolicator.images[$0].path } == pie)

        let inNopie = symbolicator.symbolicate(nopieCompute, isReturnAddress: false)
        #expect(inNopie.fileAddress == nopieCompute)
        #expect(inNopie.result?.frames.last?.function == "compute")

        // A return address is looked up one byte earlier.
        let returned = symbolicator.symbolicate(pieBase + pieCompute + 1, isReturnAddress: true)
        #expect(returned.fileAddress == pieCompute)
        // Outside every image.
        #expect(symbolicator.symbolicate(0x10, isReturnAddress: false).imageIndex == nil)
        #expect(symbolicator.failures.isEmpty)
    }

    /// The module path exists here but holds another build: it must not be used.
    @Test func moduleWithAnotherBuildIdStaysRaw() throws {
        let fixtures = try Fixtures.get()
        let crashedBuild = try #require(try ObjectInfo(path: fixtures.path("inline_other")).buildId)
        let images = [
            LoadedImage(
                path: fixtures.path("inline_c"), base: 0x1000_0000, size: 0x10000, buildId: crashedBuild)
        ]
        let symbolicator = ImageSymbolicator(
            images: images, locator: DebugFileLocator(debugRoots: [], debuginfod: nil))
        let lookup = symbolicator.symbolicate(0x1000_0720, isReturnAddress: true)
        #expect(lookup.imageIndex == 0)
        #expect(lookup.fileAddress == 0x71f)
        #expect(lookup.result == nil)
        #expect(symbolicator.failures.count == 1)
        #expect(
            symbolicator.failures.first?.error.description.contains(DebugId.codeId(crashedBuild)) == true)
    }
}
