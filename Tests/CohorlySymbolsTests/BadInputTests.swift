import CohorlySymbols
import Foundation
import Testing

/// Broken, hostile and missing files: a ``SymbolsError`` naming the file, never a crash.
@Suite struct BadInputTests {
    static let directory: String = {
        let path = Scratch.path("bad-input")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    static func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func emptyFile() throws {
        let path = try Self.write("empty", [])
        #expect(throws: SymbolsError.emptyFile(path: path)) { try ObjectInfo(path: path) }
        #expect(throws: SymbolsError.emptyFile(path: path)) { try ModuleSymbolicator(debugFile: path) }
    }

    @Test func randomBytes() throws {
        var generator = SeededGenerator(state: 42)
        let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let path = try Self.write("random", bytes)
        #expect(throws: SymbolsError.notELF(path: path)) { try ObjectInfo(path: path) }
    }

    @Test func elfMagicThenGarbage() throws {
        var generator = SeededGenerator(state: 7)
        let bytes =
            [0x7f, 0x45, 0x4c, 0x46]
            + (0..<4092).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let path = try Self.write("magic-garbage", bytes)
        // Either rejected as malformed, or read as an object of no use: never a crash.
        if let info = try? ObjectInfo(path: path) {
            #expect(info.buildId == nil || info.buildId != nil)
        }
        _ = try? ModuleSymbolicator(debugFile: path).symbolicate(0x1000)
    }

    @Test func headerOnly() throws {
        let fixtures = try Fixtures.get()
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("shop_release"))))
        let path = try Self.write("header-only", Array(whole.prefix(64)))
        #expect {
            try ObjectInfo(path: path)
        } throws: { error in
            guard case SymbolsError.malformed(path, let reason) = error else { return false }
            return reason.hasPrefix("truncated: program headers end at ")
        }
    }

    /// Truncated copies of a real binary with DWARF: every prefix either fails cleanly or yields what is intact.
    @Test(arguments: ["shop_release", "inline_c", "inline_zlib", "shop_release.debug"])
    func truncated(_ name: String) throws {
        let fixtures = try Fixtures.get()
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path(name))))
        let cuts = [
            1, 3, 4, 16, 52, 63, 64, 65, 200, 1000, whole.count / 4, whole.count / 2, whole.count * 3 / 4,
            whole.count - 100, whole.count - 1,
        ]
        for cut in cuts where cut > 0 && cut < whole.count {
            let path = try Self.write("\(name)-cut-\(cut)", Array(whole.prefix(cut)))
            switch Result(catching: { () throws(SymbolsError) -> ObjectInfo in try ObjectInfo(path: path)
            })
            {
            case .success(let info):
                Issue.record("a copy cut at \(cut) of \(whole.count) bytes was read as whole: \(info.kind)")
            case .failure(let error):
                #expect(error.path == path)
                #expect(error.description.hasPrefix(path + ": "))
            }
            if let symbolicator = try? ModuleSymbolicator(debugFile: path) {
                for address in stride(from: UInt64(0x1000), to: 0x4000, by: 0x111) {
                    _ = symbolicator.symbolicate(address)
                }
            }
        }
    }

    @Test func directory() throws {
        #expect(throws: SymbolsError.notARegularFile(path: Self.directory)) {
            try ObjectInfo(path: Self.directory)
        }
    }

    @Test func danglingSymlink() throws {
        let path = Self.directory + "/dangling"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(
            atPath: path, withDestinationPath: Self.directory + "/no-such-file")
        #expect(throws: SymbolsError.cannotOpen(path: path, reason: "No such file or directory")) {
            try ObjectInfo(path: path)
        }
    }

    @Test func missingFile() throws {
        let path = Self.directory + "/missing"
        #expect(throws: SymbolsError.cannotOpen(path: path, reason: "No such file or directory")) {
            try ModuleSymbolicator(debugFile: path)
        }
    }

    /// Root reads anything, so the permission case runs the check in a child as `nobody` (see the CLI tests);
    /// here, as a non-root user, a 000 file must fail to open.
    @Test(.enabled(if: getuid() != 0)) func unreadableFile() throws {
        let path = try Self.write("unreadable", [0x7f, 0x45, 0x4c, 0x46])
        chmod(path, 0)
        #expect(throws: SymbolsError.cannotOpen(path: path, reason: "Permission denied")) {
            try ObjectInfo(path: path)
        }
    }

    /// Every header field of a small binary (ELF header, program and section headers) set in turn to huge
    /// values: each copy is rejected or read, and symbolication of it never traps (no overflow, no crash).
    @Test func hostileHeaderFields() throws {
        let fixtures = try Fixtures.get()
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("inline_c"))))
        func integer(_ at: Int, _ size: Int) -> Int {
            (0..<size).reduce(0) { $0 | Int(original[at + $1]) << (8 * $1) }
        }
        let phoff = integer(32, 8)
        let shoff = integer(40, 8)
        let phSize = integer(54, 2) * integer(56, 2)
        let shSize = integer(58, 2) * integer(60, 2)
        var fields: [Int] = Array(stride(from: 16, to: 64, by: 4))
        fields += stride(from: phoff, to: phoff + phSize, by: 4)
        fields += stride(from: shoff, to: shoff + shSize, by: 4)
        var rejected = 0
        var read = 0
        for field in fields where field + 8 <= original.count {
            for value: UInt64 in [0xFFFF_FFFF_FFFF_FFF0, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000] {
                var bytes = original
                withUnsafeBytes(of: value.littleEndian) {
                    for (index, byte) in $0.enumerated() { bytes[field + index] = byte }
                }
                let path = try Self.write("hostile", bytes)
                if (try? ObjectInfo(path: path)) != nil { read += 1 } else { rejected += 1 }
                if let symbolicator = try? ModuleSymbolicator(debugFile: path) {
                    for address: UInt64 in [0, 0x630, 0x720, 0x9f0, 0xFFFF_FFFF_FFFF_FFFF] {
                        _ = symbolicator.symbolicate(address, isReturnAddress: true)
                    }
                }
            }
        }
        #expect(rejected > 0)
        #expect(read > 0)
    }
}
