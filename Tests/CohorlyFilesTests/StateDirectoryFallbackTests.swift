import CohorlyFiles
import Foundation
import Testing

/// ``StateDirectory/makeDefault(_:environment:)``: a default state directory that cannot be made falls back to
/// `$XDG_RUNTIME_DIR/cohorly`, then to `cohorly-<uid>` in the temporary directory, which must be this user's and
/// private. The read-only home itself is tested with a real process (ReadOnlyHomeTests in CohorlyCrashTests).
@Suite struct StateDirectoryFallbackTests {
    static func mode(_ path: String) -> Int {
        var info = stat()
        return lstat(path, &info) == 0 ? Int(info.st_mode & 0o7777) : -1
    }

    /// A scratch tree with a `home` whose `.local` is a file (so nothing can be made under it, even as root), a
    /// `run` and a `tmp`.
    static func tree(_ label: String) throws -> String {
        let root = try PrivateFilesTests.scratch("fallback-\(label)")
        for directory in ["home", "run", "tmp"] {
            try FileManager.default.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: false)
        }
        chmod(root + "/run", 0o700)
        #expect(FileManager.default.createFile(atPath: root + "/home/.local", contents: Data("x".utf8)))
        return root
    }

    @Test func theDefaultIsUsedWhenItCanBeMade() throws {
        let root = try Self.tree("usable")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let environment = ["HOME": root + "/run", "XDG_RUNTIME_DIR": root + "/run", "TMPDIR": root + "/tmp"]
        let path = try StateDirectory.makeDefault("crashes/app", environment: environment)
        #expect(path == root + "/run/.local/state/cohorly/crashes/app")
        #expect(Self.mode(path) == 0o700)
    }

    @Test func anUnusableDefaultFallsBackToTheRuntimeDirectoryThenTheTemporaryDirectory() throws {
        let root = try Self.tree("order")
        defer { try? FileManager.default.removeItem(atPath: root) }
        var environment = ["HOME": root + "/home", "XDG_RUNTIME_DIR": root + "/run", "TMPDIR": root + "/tmp"]
        let runtime = try StateDirectory.makeDefault("crashes/app", environment: environment)
        #expect(runtime == root + "/run/cohorly/crashes/app")
        #expect(Self.mode(root + "/run/cohorly") == 0o700)

        // A runtime directory others may write to is no place for reports; neither is a relative one.
        chmod(root + "/run", 0o777)
        let temporary = try StateDirectory.makeDefault("queues/app", environment: environment)
        #expect(temporary == root + "/tmp/cohorly-\(geteuid())/queues/app")
        #expect(Self.mode(root + "/tmp/cohorly-\(geteuid())") == 0o700)
        environment["XDG_RUNTIME_DIR"] = "run"
        #expect(try StateDirectory.makeDefault("queues/app", environment: environment) == temporary)
    }

    @Test func aTemporaryRootThatIsNotThisUsersPrivateDirectoryIsRefused() throws {
        let root = try Self.tree("refused")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let environment = ["HOME": root + "/home", "TMPDIR": root + "/tmp"]
        let planted = root + "/tmp/cohorly-\(geteuid())"
        let elsewhere = root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        chmod(elsewhere, 0o700)

        // A symbolic link (to a private directory of this user, even) is not followed.
        #expect(symlink(elsewhere, planted) == 0)
        #expect(throws: PrivateFiles.Failure.self) {
            try StateDirectory.makeDefault("crashes/app", environment: environment)
        }
        unlink(planted)
        // A directory open to others (someone else may have made it first, in a shared /tmp).
        #expect(mkdir(planted, 0o700) == 0)
        chmod(planted, 0o755)
        #expect(throws: PrivateFiles.Failure.self) {
            try StateDirectory.makeDefault("crashes/app", environment: environment)
        }
        // Another user's directory (root can make one: chown).
        chmod(planted, 0o700)
        if geteuid() == 0 {
            #expect(chown(planted, 65534, 65534) == 0)
            #expect(throws: PrivateFiles.Failure.self) {
                try StateDirectory.makeDefault("crashes/app", environment: environment)
            }
            #expect(chown(planted, 0, 0) == 0)
        }
        // This user's private directory is used, and the failure it answers is the default directory's.
        #expect(try StateDirectory.makeDefault("crashes/app", environment: environment) == planted + "/crashes/app")
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/crashes") == false)
    }

    @Test func whenNothingCanBeMadeTheDefaultsFailureIsThrown() throws {
        let root = try Self.tree("nothing")
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(FileManager.default.createFile(atPath: root + "/tmp-file", contents: nil))
        let environment = ["HOME": root + "/home", "TMPDIR": root + "/tmp-file"]
        do {
            _ = try StateDirectory.makeDefault("crashes/app", environment: environment)
            Issue.record("no fallback could be made, yet it returned")
        } catch {
            #expect(error.path.hasPrefix(root + "/home/.local"), "\(error)")
        }
    }
}
