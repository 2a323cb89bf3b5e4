import CohorlySymbols
import Foundation
import Testing

/// Debug-file lookup: every place a debug file can be, and a file with the wrong build id is never accepted.
@Suite struct DebugFileLocatorTests {
    /// A fresh directory per test.
    static func scratch(_ name: String) throws -> String {
        let path = Scratch.path("locator-" + name)
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func copy(_ from: String, _ to: String) throws {
        try FileManager.default.createDirectory(
            atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: from, toPath: to)
    }

    @Test func buildIdDirectoryLayout() throws {
        let fixtures = try Fixtures.get()
        let root = try Self.scratch("build-id")
        let buildId = try #require(try ObjectInfo(path: fixtures.path("shop_release")).buildId)
        let hex = DebugId.codeId(buildId)
        let target = root + "/.build-id/" + hex.prefix(2) + "/" + hex.dropFirst(2) + ".debug"
        try Self.copy(fixtures.path("shop_release.debug"), target)
        // As a search path and as a debug root (the /usr/lib/debug role).
        for locator in [
            DebugFileLocator(searchPaths: [root], debugRoots: [], debuginfod: nil),
            DebugFileLocator(searchPaths: [], debugRoots: [root], debuginfod: nil),
        ] {
            let found = try #require(locator.debugFile(buildId: buildId, codeFile: "/nonexistent/shop"))
            #expect(found.path == target)
            #expect(found.source == .buildIdDirectory)
            #expect(found.info.hasDebugInfo)
        }
    }

    @Test func debugLinkInDotDebugAndUnderTheDebugRoot() throws {
        let fixtures = try Fixtures.get()
        let directory = try Self.scratch("debuglink")
        let binary = directory + "/bin/app"
        try Self.copy(fixtures.path("shop_release.stripped"), binary)
        let buildId = try ObjectInfo(path: binary).buildId
        // Next to the binary's directory, in .debug/.
        try Self.copy(fixtures.path("shop_release.debug"), directory + "/bin/.debug/shop_release.debug")
        let nearby = DebugFileLocator(debugRoots: [], debuginfod: nil).debugFile(
            buildId: buildId, codeFile: binary)
        #expect(nearby?.path == directory + "/bin/.debug/shop_release.debug")
        #expect(nearby?.source == .debugLink)
        try FileManager.default.removeItem(atPath: directory + "/bin/.debug")
        // Under a debug root, mirroring the binary's directory (/usr/lib/debug/<dir>/<name>).
        let root = directory + "/debugroot"
        try Self.copy(fixtures.path("shop_release.debug"), root + directory + "/bin/shop_release.debug")
        let underRoot = DebugFileLocator(debugRoots: [root], debuginfod: nil).debugFile(
            buildId: buildId, codeFile: binary)
        #expect(underRoot?.path == root + directory + "/bin/shop_release.debug")
    }

    @Test func recursiveSearchPathAndSymlinkLoop() throws {
        let fixtures = try Fixtures.get()
        let directory = try Self.scratch("recursive")
        try Self.copy(fixtures.path("shop_release.debug"), directory + "/a/b/c/renamed.bin")
        try "not elf".write(toFile: directory + "/a/notes.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: directory + "/a/b/loop", withDestinationPath: directory + "/a")
        let buildId = try ObjectInfo(path: fixtures.path("shop_release")).buildId
        let locator = DebugFileLocator(searchPaths: [directory], debugRoots: [], debuginfod: nil)
        let found = locator.debugFile(buildId: buildId, codeFile: nil)
        #expect(found?.path.hasSuffix("/renamed.bin") == true)
        #expect(found?.source == .searchPath)
    }

    @Test func wrongBuildIdIsRejected() throws {
        let fixtures = try Fixtures.get()
        let directory = try Self.scratch("wrong-id")
        let binary = directory + "/inline_c.stripped"
        try Self.copy(fixtures.path("inline_c.stripped"), binary)
        // The debuglink target exists but comes from another build (inline.c at -O1).
        _ = try run(
            Fixtures.objcopy,
            ["--only-keep-debug", fixtures.path("inline_other"), directory + "/inline_c.debug"])
        let expected = try ObjectInfo(path: binary).buildId
        #expect(try ObjectInfo(path: directory + "/inline_c.debug").buildId != expected)
        let locator = DebugFileLocator(searchPaths: [directory], debugRoots: [], debuginfod: nil)
        let found = locator.debugFile(buildId: expected, codeFile: binary)
        // Only the binary itself (its own .dynsym) is acceptable.
        #expect(found?.path == binary)
        #expect(found?.source == .itself)
        let symbolicator = try ModuleSymbolicator.open(codeFile: binary, buildId: nil, locator: locator)
        #expect(!symbolicator.hasDWARF)
        // No file anywhere with this id.
        #expect(locator.debugFile(buildId: [1, 2, 3, 4], codeFile: nil) == nil)
        #expect(locator.find(.codeId("01020304")).isEmpty)
    }

    @Test func findReportsDebugFilesAndExecutables() throws {
        let fixtures = try Fixtures.get()
        let directory = try Self.scratch("find")
        for name in ["shop_release", "shop_release.debug", "shop_release.stripped", "inline_c"] {
            try Self.copy(fixtures.path(name), directory + "/" + name)
        }
        let info = try ObjectInfo(path: directory + "/shop_release")
        let locator = DebugFileLocator(searchPaths: [directory], debugRoots: [], debuginfod: nil)
        for identifier in [DebugId.Identifier.codeId(info.codeId ?? ""), .debugId(info.debugId ?? "")] {
            let found = locator.find(identifier).map { ($0.path as NSString).lastPathComponent }
            #expect(Set(found) == ["shop_release", "shop_release.debug", "shop_release.stripped"])
        }
    }

    /// Without a build id, a debuglink target is accepted only when its CRC matches.
    @Test func debugLinkCRCWithoutBuildId() throws {
        let fixtures = try Fixtures.get()
        let directory = try Self.scratch("crc")
        let binary = directory + "/inline_noid.stripped"
        try Self.copy(fixtures.path("inline_noid.stripped"), binary)
        #expect(try ObjectInfo(path: binary).buildId == nil)
        let locator = DebugFileLocator(debugRoots: [], debuginfod: nil)
        // A different debug file under the linked name: CRC mismatch, only the binary itself remains.
        _ = try run(
            Fixtures.objcopy,
            ["--only-keep-debug", fixtures.path("inline_other"), directory + "/inline_noid.debug"])
        #expect(locator.debugFile(buildId: nil, codeFile: binary)?.path == binary)
        // The right one.
        try FileManager.default.removeItem(atPath: directory + "/inline_noid.debug")
        try Self.copy(fixtures.path("inline_noid.debug"), directory + "/inline_noid.debug")
        let found = locator.debugFile(buildId: nil, codeFile: binary)
        #expect(found?.path == directory + "/inline_noid.debug")
        #expect(found?.source == .debugLink)
    }
}

/// `debug-files find DEBUG_ID`: a debug id names only the first 16 bytes of a build id, yet the
/// `.build-id/xx/rest.debug` layout of a debug root (the `/usr/lib/debug` role) is searched by it.
@Suite struct DebugIdLookupTests {
    @Test func aDebugIdFindsTheBuildIdDirectoryOfADebugRoot() throws {
        let fixtures = try Fixtures.get()
        let root = try DebugFileLocatorTests.scratch("debug-id")
        let info = try ObjectInfo(path: fixtures.path("shop_release"))
        let hex = try #require(info.codeId)
        let debugId = try #require(info.debugId)
        let target = root + "/.build-id/" + hex.prefix(2) + "/" + hex.dropFirst(2) + ".debug"
        try DebugFileLocatorTests.copy(fixtures.path("shop_release.debug"), target)
        #expect(DebugId.codeIdPrefix(debugId: debugId) == String(hex.prefix(32)))
        let locator = DebugFileLocator(searchPaths: [], debugRoots: [root], debuginfod: nil)
        let found = locator.find(.debugId(debugId))
        #expect(found.map(\.path) == [target])
        #expect(found.first?.source == .buildIdDirectory)
        // Another debug id with the same first byte finds nothing.
        var other = Array(debugId)
        other[other.count - 1] = other.last == "0" ? "1" : "0"
        #expect(locator.find(.debugId(String(other))).isEmpty)
    }
}
