import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// `serve --data DIR` on a directory another local user prepared is refused before anything in it is opened,
/// with the path and the fix. The tests run as root: "another user" is uid 65534 (nobody) by chown.
@Suite struct DataDirectoryTrustTests {
    static let other: uid_t = 65534

    static func configuration(_ directory: URL) -> CollectorConfiguration {
        var configuration = CollectorConfiguration()
        configuration.dataDirectory = directory
        return configuration
    }

    /// The refusal's text, or nil when the collector opened the directory.
    static func refusal(_ directory: URL) -> String? {
        do {
            let collector = try Collector(configuration: configuration(directory))
            collector.stop()
            return nil
        } catch {
            return "\(error)"
        }
    }

    static func mode(_ path: String) -> mode_t {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    @Test func aDirectoryOfAnotherUserOrWritableByOthersIsRefused() throws {
        let foreign = temporaryDirectory().appendingPathComponent("cohorly")
        #expect(mkdir(foreign.path, 0o777) == 0 && chmod(foreign.path, 0o777) == 0)
        #expect(chown(foreign.path, Self.other, Self.other) == 0)
        let reason = try #require(Self.refusal(foreign))
        #expect(reason.contains(foreign.path) && reason.contains("owned by another user"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: foreign.appendingPathComponent("collector.sqlite").path))
        let open = temporaryDirectory().appendingPathComponent("open")
        #expect(mkdir(open.path, 0o777) == 0 && chmod(open.path, 0o777) == 0)
        let writable = try #require(Self.refusal(open))
        #expect(writable.contains("world-writable") && writable.contains("chmod 700"), "\(writable)")
    }

    @Test func aPlantedDatabaseIsRefusedBeforeAnythingIsWrittenToIt() throws {
        let directory = temporaryDirectory()
        let planted = directory.appendingPathComponent("collector.sqlite").path
        #expect(FileManager.default.createFile(atPath: planted, contents: nil))
        #expect(chmod(planted, 0o666) == 0 && chown(planted, Self.other, Self.other) == 0)
        let reason = try #require(Self.refusal(directory))
        #expect(reason.contains(planted) && reason.contains("belongs to another user (uid 65534)"), "\(reason)")
        #expect((try FileManager.default.attributesOfItem(atPath: planted)[.size] as? Int) == 0)
        #expect(!FileManager.default.fileExists(atPath: planted + "-wal"))
    }

    @Test func aPlantedSymlinkIsRefusedAndNotFollowed() throws {
        for name in ["collector.lock", "collector.sqlite-wal", "debug-files"] {
            let directory = temporaryDirectory()
            let target = temporaryDirectory().appendingPathComponent("chosen-by-them").path
            #expect(symlink(target, directory.appendingPathComponent(name).path) == 0)
            let reason = try #require(Self.refusal(directory), "\(name)")
            #expect(reason.contains("\(name) is a symbolic link"), "\(reason)")
            #expect(!FileManager.default.fileExists(atPath: target), "\(name): followed")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("collector.sqlite").path))
        }
    }

    @Test func ownFilesWithLooseModesAreNarrowed() throws {
        let directory = temporaryDirectory()
        let database = directory.appendingPathComponent("collector.sqlite").path
        #expect(FileManager.default.createFile(atPath: database, contents: nil))
        #expect(chmod(database, 0o644) == 0)
        #expect(Self.refusal(directory) == nil)
        #expect(Self.mode(database) == 0o600)
    }

    @Test func serveRefusesWithThePathAndTheFix() async throws {
        let directory = temporaryDirectory()
        let planted = directory.appendingPathComponent("collector.sqlite").path
        #expect(FileManager.default.createFile(atPath: planted, contents: nil))
        #expect(chown(planted, Self.other, Self.other) == 0)
        let result = try await CLITests.run(["serve", "--port", "0", "--data", directory.path])
        #expect(result.status == 1)
        #expect(result.error.contains(planted) && result.error.contains("remove it"), "\(result.error)")
    }
}
