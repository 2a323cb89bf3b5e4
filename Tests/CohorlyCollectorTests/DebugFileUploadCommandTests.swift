import Cohorly
import CohorlyCollector
@testable import CohorlyCollectorCore
import Foundation
import Testing

/// `cohorly debug-files upload` as a real process against an in-process collector.
@Suite struct DebugFileUploadCommandTests {
    static let secret = "pipeline-secret"

    /// Runs the CLI with only the given environment (plus PATH).
    static func upload(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        status: Int32, output: String, error: String
    ) {
        try await cohorly(["debug-files", "upload"] + arguments, environment: environment)
    }

    /// Runs `cohorly` with only the given environment (plus PATH), retries made fast.
    static func cohorly(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        status: Int32, output: String, error: String
    ) {
        try await CLITests.run(arguments, environment: ["COHORLY_RETRY_DELAY_MS": "1"].merging(environment) { $1 })
    }

    /// A directory with the split program's stripped binary and debug file (what a release pipeline uploads).
    static func releaseDirectory(_ program: SplitProgram) throws -> String {
        let directory = SplitProgram.scratch("release")
        try FileManager.default.createDirectory(atPath: directory + "/bin", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: program.stripped, toPath: directory + "/bin/prog")
        try FileManager.default.copyItem(atPath: program.debug, toPath: directory + "/prog.debug")
        try Data("not an ELF file\n".utf8).write(to: URL(fileURLWithPath: directory + "/README"))
        return directory
    }

    @Test func uploadsOnceThenSendsNoFileBytes() async throws {
        let program = try SplitProgram.get()
        let collector = try startCollector { $0.adminToken = Self.secret }
        let directory = try Self.releaseDirectory(program)
        let host = collector.baseURL.absoluteString
        let first = try await Self.upload(
            [directory, "--release", "prog@1.0", "--host", host, "--json"],
            environment: ["COHORLY_AUTH_TOKEN": Self.secret])
        #expect(first.status == 0, "\(first.error)")
        let summary = try #require(CohorlyValue(json: first.output), "\(first.output)")
        #expect(summary["uploaded"] == 2)
        #expect(summary["already_present"] == 0)
        let sent = try #require(summary["bytes_sent"]?.intValue)
        let total = contents(program.stripped).count + contents(program.debug).count
        #expect(sent > 0 && sent < total)  // deflated
        #expect(collector.debugFiles.statistics.bytesReceived == Int64(sent))
        #expect(!first.error.contains("uploading"))  // no progress line when stderr is not a terminal

        // Stored and served with identical bytes, also to a real debuginfod client.
        let debuginfod = try SplitProgram.run(
            "/usr/bin/debuginfod-find", ["debuginfo", program.buildId],
            environment: ["DEBUGINFOD_URLS": host, "DEBUGINFOD_CACHE_PATH": SplitProgram.scratch("cache")])
        #expect(
            contents(debuginfod.trimmingCharacters(in: .whitespacesAndNewlines)).digest
                == contents(program.debug).digest)
        let found = try await Self.cohorly(
            ["debug-files", "find", program.buildId, "--json"],
            environment: ["DEBUGINFOD_URLS": host, "DEBUGINFOD_CACHE_PATH": SplitProgram.scratch("find-cache")])
        #expect(found.status == 0, "\(found.error)")
        #expect(found.output.contains(program.buildId))
        let executable = try #require(collector.debugFiles.debugFile(buildId: program.buildId, kind: .executable))
        #expect(contents(executable.path).digest == contents(program.stripped).digest)
        #expect(try collector.debugFiles.list().allSatisfy { $0.releases == ["prog@1.0"] })

        // Again, for the next release: nothing is sent, the files are attached to it.
        let second = try await Self.upload(
            [directory, "--release", "prog@1.1", "--host", host, "--auth-token", Self.secret])
        #expect(second.status == 0, "\(second.error)")
        #expect(
            second.output.hasSuffix("0 uploaded (0 bytes sent), 2 already present, 0 skipped\n"), "\(second.output)")
        #expect(collector.debugFiles.statistics.bytesReceived == Int64(sent))
        #expect(try collector.debugFiles.list().allSatisfy { $0.releases == ["prog@1.0", "prog@1.1"] })
    }

    @Test func anUnstrippedBinaryIsSentOnceForBothKinds() async throws {
        let program = try SplitProgram.get()
        let collector = try startCollector()
        let run = try await Self.upload([
            program.full, "--release", "r", "--host", collector.baseURL.absoluteString, "--json",
        ])
        #expect(run.status == 0, "\(run.error)")
        let summary = try #require(CohorlyValue(json: run.output))
        #expect(summary["files"]?.arrayValue?.first?["kinds"] == ["executable", "debuginfo"])
        #expect(collector.debugFiles.statistics.uploadsStored == 1)
        let debuginfo = try #require(collector.debugFiles.debugFile(buildId: program.buildId, kind: .debuginfo))
        #expect(contents(debuginfo.path).digest == contents(program.full).digest)
        #expect(collector.debugFiles.debugFile(buildId: program.buildId, kind: .executable) == debuginfo)
        #expect(try collector.debugFiles.list().allSatisfy { $0.fileName == "prog" })
    }

    /// The stripped binary uploaded by mistake, then the unstripped one of the same build id: the first run warns,
    /// the second stores its debuginfo half and says how to replace the executable, and `--force` does, with a
    /// secret and without.
    @Test(arguments: [false, true]) func aStrippedBinaryUploadedByMistakeCanBeReplaced(withSecret: Bool) async throws {
        let program = try SplitProgram.get()
        let collector = try startCollector { if withSecret { $0.adminToken = Self.secret } }
        let environment = withSecret ? ["COHORLY_AUTH_TOKEN": Self.secret] : [:]
        let arguments = ["--release", "r", "--host", collector.baseURL.absoluteString]
        func stored(_ kind: DebugFileKind) -> String? {
            collector.debugFiles.debugFile(buildId: program.buildId, kind: kind).map { contents($0.path).digest }
        }

        let stripped = try await Self.upload([program.stripped] + arguments, environment: environment)
        #expect(stripped.status == 0, "\(stripped.error)")
        #expect(
            stripped.error.contains(
                "cohorly: warning: \(program.stripped): no DWARF debug info: crashes in it will have no file:line;"
                    + " upload the binary before it is stripped"), "\(stripped.error)")
        #expect(stripped.output.contains("(no DWARF debug info: "), "\(stripped.output)")
        #expect(stored(.executable) == contents(program.stripped).digest)

        let full = try await Self.upload([program.full] + arguments, environment: environment)
        #expect(full.status == 1)
        #expect(!full.error.contains("warning"), "\(full.error)")
        #expect(
            full.error.contains(
                "executable: 409: build id \(program.buildId) already has an executable with other bytes"),
            "\(full.error)")
        #expect(
            full.error.contains("upload again with `cohorly debug-files upload --force`"), "\(full.error)")
        #expect(stored(.debuginfo) == contents(program.full).digest)  // the half that could be stored was
        #expect(stored(.executable) == contents(program.stripped).digest)

        let forced = try await Self.upload([program.full, "--force"] + arguments, environment: environment)
        #expect(forced.status == 0, "\(forced.error)")
        #expect(stored(.executable) == contents(program.full).digest)
        #expect(stored(.debuginfo) == contents(program.full).digest)
    }

    @Test func skipsFilesOfNoUse() async throws {
        let collector = try startCollector()
        let directory = SplitProgram.scratch("useless")
        let source = directory + "/main.c"
        try Data("int main(void) { return 0; }\n".utf8).write(to: URL(fileURLWithPath: source))
        try SplitProgram.run("/opt/swift/usr/bin/clang", ["-c", source, "-o", directory + "/main.o"])
        try SplitProgram.run(
            "/opt/swift/usr/bin/clang", ["-g", "-Wl,--build-id=none", source, "-o", directory + "/no-build-id"])
        try Data("hello".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
        let arguments = [
            directory, directory + "/notes.txt", "--release", "r", "--host", collector.baseURL.absoluteString,
        ]
        let run = try await Self.upload(arguments + ["--allow-empty"])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("(not an ELF file)"))
        #expect(run.output.contains("(no GNU build id)"))
        // Object files are summed up in one line, not listed one by one.
        #expect(!run.output.contains("main.o"), "\(run.output)")
        #expect(run.output.contains("  skipped         1 relocatable object file (.o"), "\(run.output)")
        #expect(run.output.hasSuffix("0 uploaded (0 bytes sent), 0 already present, 3 skipped\n"), "\(run.output)")
        #expect(try collector.debugFiles.list().isEmpty)

        // Without --allow-empty, a PATH with nothing to upload fails and says so, for each such PATH.
        let empty = try await Self.upload(arguments)
        #expect(empty.status == 1)
        #expect(empty.error.contains("cohorly: nothing to upload under \(directory): "), "\(empty.error)")
        #expect(empty.error.contains("cohorly: nothing to upload under \(directory)/notes.txt: "), "\(empty.error)")
        // A named file that is not ELF is not counted as an ELF file skipped.
        #expect(empty.error.contains("(0 ELF files skipped, 1 file not ELF)"), "\(empty.error)")
        #expect(empty.error.contains("(2 ELF files skipped)"), "\(empty.error)")
    }

    @Test func aSymlinkedDirectoryNamedOnTheCommandLineIsWalked() async throws {
        let program = try SplitProgram.get()
        let collector = try startCollector()
        let directory = try Self.releaseDirectory(program)
        // SwiftPM's `.build/release` is a symlink to `.build/<triple>/release`; a link back up inside is not followed.
        let link = SplitProgram.scratch("release-link") + "/release"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory)
        try FileManager.default.createSymbolicLink(atPath: directory + "/bin/up", withDestinationPath: "..")
        let run = try await Self.upload([link, "--release", "r", "--host", collector.baseURL.absoluteString, "--json"])
        #expect(run.status == 0, "\(run.error)")
        let summary = try #require(CohorlyValue(json: run.output), "\(run.output)")
        #expect(summary["uploaded"] == 2)
        let paths = summary["files"]?.arrayValue?.compactMap { $0["path"]?.stringValue } ?? []
        #expect(paths.sorted() == [link + "/bin/prog", link + "/prog.debug"])
        #expect(collector.debugFiles.debugFile(buildId: program.buildId, kind: .debuginfo) != nil)
    }

    @Test func retriesTransientFailuresThenGivesUp() async throws {
        let program = try SplitProgram.get()
        let collector = try startCollector()
        let path = "/api/debug-files/\(program.buildId)/debuginfo"
        collector.injectFault(Fault(status: 503, path: path), count: 2)
        let host = collector.baseURL.absoluteString
        let retried = try await Self.upload([program.debug, "--release", "r", "--host", host])
        #expect(retried.status == 0, "\(retried.error)")
        #expect(collector.appliedFaultCount == 2)
        #expect(collector.debugFiles.debugFile(buildId: program.buildId, kind: .debuginfo) != nil)

        let other = try startCollector()
        other.injectFault(Fault(status: 503, path: path), count: 10)
        let failed = try await Self.upload([program.debug, "--release", "r", "--host", other.baseURL.absoluteString])
        #expect(failed.status == 1)
        #expect(failed.error.contains("503: injected fault (after 4 attempts)"), "\(failed.error)")
        #expect(failed.output.hasPrefix("  failed "))
        #expect(failed.output.hasSuffix("0 already present, 0 skipped, 1 failed\n"), "\(failed.output)")
        #expect(other.appliedFaultCount == 4)
        #expect(other.debugFiles.debugFile(buildId: program.buildId, kind: .debuginfo) == nil)
    }

    @Test func aWrongSecretOrNoCollectorFailsAndStoresNothing() async throws {
        let program = try SplitProgram.get()
        let collector = try startCollector { $0.adminToken = Self.secret }
        let host = collector.baseURL.absoluteString
        let wrong = try await Self.upload([program.debug, "--release", "r", "--host", host, "--auth-token", "guess"])
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("refused the check (401)"), "\(wrong.error)")
        #expect(try collector.debugFiles.list().isEmpty)
        #expect(collector.debugFiles.statistics.bytesReceived == 0)

        let unreachable = try await Self.upload([program.debug, "--release", "r", "--host", "http://127.0.0.1:1"])
        #expect(unreachable.status == 1)
        #expect(unreachable.error.contains("cannot reach http://127.0.0.1:1"), "\(unreachable.error)")
    }

    @Test func showsAProgressLineOnATerminal() throws {
        let program = try SplitProgram.get()
        let collector = try startCollector()
        // script(1) gives the CLI a pseudo-terminal; the transcript holds what it wrote there.
        let command = [
            CLITests.cli.path, "debug-files", "upload", program.debug, "--release", "r", "--host",
            collector.baseURL.absoluteString,
        ].joined(separator: " ")
        let transcript = try SplitProgram.run("/usr/bin/script", ["-qec", command, "/dev/null"])
        #expect(transcript.contains("\r\u{1b}[2Kuploading prog.debug  100% of "), "\(transcript)")
        #expect(transcript.contains("1 uploaded ("))
    }

    @Test func usageErrorsExitTwo() async throws {
        #expect(try await Self.upload([]).status == 2)
        let noRelease = try await Self.upload(["/bin/true"])
        #expect(noRelease.status == 2)
        #expect(noRelease.error.contains("missing --release"))
        #expect(try await Self.upload(["/bin/true", "--release", "r", "--host", "ftp://x"]).status == 2)
        #expect(try await Self.upload(["/bin/true", "--release", "r", "--bogus"]).status == 2)
        let help = try await Self.upload(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("EXIT STATUS"))
    }
}
