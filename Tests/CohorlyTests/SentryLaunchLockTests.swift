import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// The launch locks' files (SessionLock): a launch killed after making its file and before committing its
/// session leaves a file no session names; a later launch removes it, and nothing a running launch needs.
@Suite struct SentryLaunchLockTests {
    @Test func aLaunchRemovesStrayLockFilesAndKeepsHeldAndFreshOnes() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let directory = temporaryDirectory()
        func file(_ sid: String) -> String { directory.appendingPathComponent("sentry-\(sid).lock").path }
        let stray = UUID().uuidString.lowercased()
        let fresh = UUID().uuidString.lowercased()
        let held = UUID().uuidString.lowercased()
        let linked = UUID().uuidString.lowercased()
        let old = Date().addingTimeInterval(-120)
        for sid in [stray, fresh, held] {
            #expect(FileManager.default.createFile(atPath: file(sid), contents: nil))
        }
        #expect(symlink(file(stray), file(linked)) == 0)
        let other = directory.appendingPathComponent("sentry-notes.txt").path
        #expect(FileManager.default.createFile(atPath: other, contents: nil))
        for path in [file(stray), file(held), other] {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        }
        // Held as a running launch holds it.
        let descriptor = open(file(held), O_RDWR | O_CLOEXEC)
        #expect(descriptor >= 0 && flock(descriptor, LOCK_EX) == 0)
        defer { close(descriptor) }

        let client = try makeSentryClient(mock, directory: directory)
        defer { client.shutdown() }
        #expect(!FileManager.default.fileExists(atPath: file(stray)))
        for path in [file(fresh), file(held), other] { #expect(FileManager.default.fileExists(atPath: path)) }
        var info = stat()
        #expect(lstat(file(linked), &info) == 0)  // not a regular file: never touched
        // This launch's own file is held and stays while it runs.
        let own = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("sentry-") && $0.hasSuffix(".lock")
        }
        #expect(own.count == 4, "\(own)")
    }
}
