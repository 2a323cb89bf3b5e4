import CohorlySymbols
import Foundation
import Testing

@Suite struct ObjectInfoTests {
    @Test func debugIdRule() {
        // sentry-cli's and relay's published examples.
        let sentry = DebugId.buildId(hex: "02547a308094c28e25f1a4adc744a9917194db0a")!
        #expect(DebugId.codeId(sentry) == "02547a308094c28e25f1a4adc744a9917194db0a")
        #expect(DebugId.debugId(sentry) == "307a5402-9480-8ec2-25f1-a4adc744a991")
        let relay = DebugId.buildId(hex: "f1c3bcc0279865fe3058404b2831d9e64135386c")!
        #expect(DebugId.debugId(relay) == "c0bcc3f1-9827-fe65-3058-404b2831d9e6")
        // Short ids are zero-padded; big-endian files are not swapped.
        #expect(DebugId.debugId([1, 2, 3, 4, 5, 6, 7, 8]) == "04030201-0605-0807-0000-000000000000")
        #expect(
            DebugId.debugId([1, 2, 3, 4, 5, 6, 7, 8], littleEndian: false)
                == "01020304-0506-0708-0000-000000000000")
    }

    @Test func parsingIds() {
        #expect(
            DebugId.parse("02547A308094C28E25F1A4ADC744A9917194DB0A")
                == .codeId("02547a308094c28e25f1a4adc744a9917194db0a"))
        #expect(
            DebugId.parse("307a5402-9480-8ec2-25f1-a4adc744a991")
                == .debugId("307a5402-9480-8ec2-25f1-a4adc744a991"))
        #expect(
            DebugId.parse("307A5402-9480-8EC2-25F1-A4ADC744A991-0")
                == .debugId("307a5402-9480-8ec2-25f1-a4adc744a991"))
        #expect(DebugId.parse("xyz") == nil)
        #expect(DebugId.parse("abc") == nil)
        #expect(DebugId.parse("") == nil)
    }

    /// Build ids and debug ids of every ELF file in two big directories equal what `readelf -n` prints.
    @Test(arguments: ["/usr/lib/x86_64-linux-gnu", "/opt/swift/usr/bin"])
    func idsMatchReadelf(_ directory: String) throws {
        let files = try elfFiles(under: directory)
        #expect(files.count > 20)
        let expected = try readelfBuildIds(files)
        var checked = 0
        var withId = 0
        for file in files {
            let info = try ObjectInfo(path: file)
            checked += 1
            #expect(info.codeId == expected[file], "\(file)")
            if let id = expected[file] {
                withId += 1
                #expect(info.debugId == DebugId.debugId(DebugId.buildId(hex: id)!), "\(file)")
                #expect(info.arch == "x86_64")
            }
        }
        #expect(checked == files.count)
        #expect(withId > 5)
    }

    @Test func fixtureFacts() throws {
        let fixtures = try Fixtures.get()
        let binary = try ObjectInfo(path: fixtures.path("shop_release"))
        #expect(binary.kind == .executable)
        #expect(binary.features == ["symtab", "debug", "unwind"])
        #expect(binary.problems.isEmpty)
        #expect(binary.debugLink == nil)

        let stripped = try ObjectInfo(path: fixtures.path("shop_release.stripped"))
        #expect(stripped.kind == .executable)
        #expect(stripped.buildId == binary.buildId)
        #expect(
            !stripped.hasDebugInfo && !stripped.hasSymtab && stripped.hasDynsym && stripped.hasUnwindInfo)
        #expect(stripped.problems == [.noDebugInfo])
        let link = try #require(stripped.debugLink)
        #expect(link.name == "shop_release.debug")
        let debugBytes = try [UInt8](
            Data(contentsOf: URL(fileURLWithPath: fixtures.path("shop_release.debug"))))
        #expect(link.crc == crc32(debugBytes))

        let companion = try ObjectInfo(path: fixtures.path("shop_release.debug"))
        #expect(companion.kind == .debugCompanion)
        #expect(companion.buildId == binary.buildId)
        #expect(companion.hasDebugInfo && companion.hasSymtab && !companion.hasUnwindInfo)
        #expect(companion.problems == [.noUnwindInfo])

        let library = try ObjectInfo(path: "/usr/lib/x86_64-linux-gnu/libdw.so.1")
        #expect(library.kind == .sharedLibrary)
        #expect(try ObjectInfo(path: "/usr/lib/x86_64-linux-gnu/libc.so.6").kind == .sharedLibrary)
        #expect(try ObjectInfo(path: "/opt/swift/usr/bin/swift-demangle").kind == .executable)
        #expect(try ObjectInfo(path: fixtures.path("inline_c")).kind == .executable)
        #expect(try ObjectInfo(path: fixtures.path("inline_gcc")).kind == .executable)
    }

    @Test func compressedSections() throws {
        let fixtures = try Fixtures.get()
        let zlib = try ObjectInfo(path: fixtures.path("inline_zlib"))
        #expect(zlib.compressedSections[".debug_info"] == .zlib)
        #expect(zlib.hasDebugInfo && zlib.problems.isEmpty)
        let gnu = try ObjectInfo(path: fixtures.path("inline_zlib_gnu"))
        #expect(gnu.compressedSections[".zdebug_info"] == .zlibGNU)
        #expect(gnu.hasDebugInfo && gnu.problems.isEmpty)
        let plain = try ObjectInfo(path: fixtures.path("inline_c"))
        #expect(plain.compressedSections.isEmpty)
    }

    @Test func splitDwarfIsReported() throws {
        let fixtures = try Fixtures.get()
        let split = try ObjectInfo(path: fixtures.path("inline_split"))
        #expect(split.hasSplitDwarf)
        #expect(split.problems.contains(.splitDwarf))
        #expect(!(try ObjectInfo(path: fixtures.path("inline_c"))).hasSplitDwarf)
        // Swift's references to clang module caches are not split DWARF.
        #expect(!(try ObjectInfo(path: fixtures.path("shop_release"))).hasSplitDwarf)
    }

    @Test func relocatableObject() throws {
        let fixtures = try Fixtures.get()
        let object = fixtures.path("inline.o")
        _ = try run(Fixtures.clang, ["-c", "-g", Fixtures.sources + "/inline.c", "-o", object])
        let info = try ObjectInfo(path: object)
        #expect(info.kind == .relocatable)
        #expect(info.problems.contains(.noBuildId))
    }
}

/// Regular files with the ELF magic under `directory` (symlinks skipped: each file once).
func elfFiles(under directory: String) throws -> [String] {
    var result: [String] = []
    let enumerator = FileManager.default.enumerator(atPath: directory)
    while let relative = enumerator?.nextObject() as? String {
        let path = directory + "/" + relative
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
        guard let handle = FileHandle(forReadingAtPath: path) else { continue }
        let magic = try handle.read(upToCount: 4)
        try handle.close()
        if magic == Data([0x7f, 0x45, 0x4c, 0x46]) { result.append(path) }
    }
    return result.sorted()
}

/// `readelf -n` over many files at once: path → build id hex.
func readelfBuildIds(_ files: [String]) throws -> [String: String] {
    var result: [String: String] = [:]
    var start = 0
    while start < files.count {
        let batch = Array(files[start..<min(files.count, start + 400)])
        start += batch.count
        let output = try run("/usr/bin/readelf", ["-n", "-W"] + batch, allowFailure: true)
        var current: String?
        for line in output.split(separator: "\n") {
            if line.hasPrefix("File: ") {
                current = String(line.dropFirst(6))
            } else if let current, let range = line.range(of: "Build ID: ") {
                if result[current] == nil {
                    result[current] = String(line[range.upperBound...]).trimmingCharacters(in: .whitespaces)
                }
            }
        }
        // A single file is printed without a "File:" header.
        if batch.count == 1, let only = batch.first, let range = output.range(of: "Build ID: ") {
            result[only] = String(output[range.upperBound...].prefix(while: { !$0.isNewline }))
        }
    }
    return result
}

/// CRC-32 (the zlib / .gnu_debuglink polynomial).
func crc32(_ bytes: [UInt8]) -> UInt32 {
    var table = [UInt32](repeating: 0, count: 256)
    for index in 0..<256 {
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        table[index] = value
    }
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xff)] ^ (crc >> 8) }
    return crc ^ 0xFFFF_FFFF
}
