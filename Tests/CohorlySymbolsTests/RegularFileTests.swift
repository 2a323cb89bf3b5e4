import CohorlySymbols
import Foundation
import Testing

/// ``RegularFile``: only regular files are opened; reads stop at the limit.
@Suite struct RegularFileTests {
    static let directory: String = {
        let path = Scratch.path("regular-file")
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// A FIFO with no writer: a blocking open would never return, so passing at all shows it was not opened.
    @Test func fifoIsRefusedWithoutBlocking() throws {
        let path = Self.directory + "/fifo"
        unlink(path)
        try #require(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        #expect(throws: SymbolsError.notARegularFile(path: path)) { try RegularFile(path: path) }
        #expect(throws: SymbolsError.notARegularFile(path: path)) { try ObjectInfo(path: path) }
    }

    @Test func devicesAndDirectoriesAreRefused() {
        for path in ["/dev/null", "/dev/zero", Self.directory] {
            #expect(throws: SymbolsError.notARegularFile(path: path)) { try RegularFile(path: path) }
        }
    }

    @Test func readAllStopsAtTheLimit() throws {
        let path = Self.directory + "/ten"
        try Data(repeating: 7, count: 10).write(to: URL(fileURLWithPath: path))
        let file = try RegularFile(path: path)
        #expect(file.size == 10)
        #expect(try file.readAll(limit: 10) == [UInt8](repeating: 7, count: 10))
        #expect(throws: SymbolsError.tooLarge(path: path, limit: 9)) { try file.readAll(limit: 9) }
        #expect(throws: SymbolsError.tooLarge(path: path, limit: 0)) { try file.readAll(limit: -5) }
    }

    /// A sparse 2 GiB file is refused from its size, without being read.
    @Test func hugeFileIsRefusedBeforeReading() throws {
        let path = Self.directory + "/huge"
        let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        #expect(ftruncate(fd, 2 << 30) == 0)
        close(fd)
        defer { unlink(path) }
        let file = try RegularFile(path: path)
        #expect(throws: SymbolsError.tooLarge(path: path, limit: 1 << 20)) { try file.readAll(limit: 1 << 20) }
    }
}
