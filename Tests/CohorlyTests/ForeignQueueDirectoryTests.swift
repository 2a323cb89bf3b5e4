import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// A queue directory another local user prepared (issue 26): the client does not use it — it keeps its queue in
/// memory, as for an unwritable directory — and follows none of the links planted in it. The tests run as root:
/// "another user" is uid 65534 (nobody) by chown.
@Suite struct ForeignQueueDirectoryTests {
    static let other: uid_t = 65534

    @Test func aDirectoryOfAnotherUserWithAPlantedQueueIsNotUsed() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory().appendingPathComponent("planted")
        #expect(mkdir(directory.path, 0o777) == 0 && chmod(directory.path, 0o777) == 0)
        let queue = directory.appendingPathComponent("queue.sqlite").path
        #expect(FileManager.default.createFile(atPath: queue, contents: nil))
        #expect(chmod(queue, 0o666) == 0)
        let target = temporaryDirectory().appendingPathComponent("chosen-by-them").path
        #expect(symlink(target, directory.appendingPathComponent("queue.lock").path) == 0)
        for path in [directory.path, queue] { #expect(chown(path, Self.other, Self.other) == 0) }
        let client = makeClient(collector, directory: directory)
        client.track("secret")
        #expect(!client.queueIsPersisted)
        client.shutdown()
        #expect((try FileManager.default.attributesOfItem(atPath: queue)[.size] as? Int) == 0)
        #expect(!FileManager.default.fileExists(atPath: queue + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func aPrivateDirectoryWithAPlantedDatabaseIsNotUsed() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let queue = directory.appendingPathComponent("queue.sqlite").path
        #expect(FileManager.default.createFile(atPath: queue, contents: nil))
        #expect(chmod(queue, 0o666) == 0 && chown(queue, Self.other, Self.other) == 0)
        let client = makeClient(collector, directory: directory)
        client.track("secret")
        #expect(!client.queueIsPersisted)
        client.shutdown()
        #expect((try FileManager.default.attributesOfItem(atPath: queue)[.size] as? Int) == 0)
    }
}
