import CZstd
import Cohorly
import CohorlySymbols
import Foundation
import Testing

/// `cohorly debug-files upload --to posthog` as a real process against ``PostHogMock`` over loopback.
@Suite struct PostHogUploadTests {
    static let key = "phx_test_personal_key_0123456789"

    /// Runs the upload with the mock's host and project, the key from the environment, retries made fast.
    static func upload(
        _ arguments: [String], _ mock: PostHogMock, environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String, error: String) {
        let base = [
            "POSTHOG_CLI_HOST": mock.url, "POSTHOG_CLI_PROJECT_ID": PostHogMock.projectId,
            "POSTHOG_CLI_API_KEY": key, "COHORLY_RETRY_DELAY_MS": "1",
        ]
        let result = try await CLITests.run(
            ["debug-files", "upload", "--to", "posthog"] + arguments, environment: base.merging(environment) { $1 })
        // The key is never shown, whatever happened.
        #expect(!result.output.contains(key) && !result.error.contains(key))
        return result
    }

    /// The split program's three files and a split-DWARF `.dwo`, in one directory.
    static func directory(_ program: SplitProgram) throws -> String {
        let directory = SplitProgram.scratch("posthog")
        for file in [program.full, program.debug, program.stripped] {
            try FileManager.default.copyItem(
                atPath: file, toPath: directory + "/" + (file as NSString).lastPathComponent)
        }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/symbols/inline.c").path
        try SplitProgram.run(
            "/opt/swift/usr/bin/clang", ["-g", "-gsplit-dwarf", "-c", source, "-o", directory + "/split.o"])
        try FileManager.default.removeItem(atPath: directory + "/split.o")
        #expect(FileManager.default.fileExists(atPath: directory + "/split.dwo"))
        return directory
    }

    /// The symbol set's wrapping undone: header checked, zstd payload decompressed (libzstd), the ZIP read by
    /// Python's `zipfile` (an independent reader, which also checks the CRC-32). Returns the entry `dwarf`.
    static func unwrap(_ bytes: [UInt8]) throws -> [UInt8] {
        let magic = Array("posthog_error_tracking".utf8)
        try #require(bytes.count > 31 && Array(bytes[0..<22]) == magic)
        #expect(Array(bytes[22..<31]) == [2, 0, 0, 0, 6, 0, 0, 0, 1])  // version 2, ElfDebugInfo, zstd
        let payload = Array(bytes[31...])
        let size = payload.withUnsafeBytes { cly_zstd_frame_content_size($0.baseAddress, $0.count) }
        let known = try #require(Int(exactly: size).flatMap { $0 < 1 << 30 ? $0 : nil }, "no content size")
        var archive = [UInt8](repeating: 0, count: known)
        var error: UnsafePointer<CChar>?
        let written = archive.withUnsafeMutableBytes { output in
            payload.withUnsafeBytes {
                cly_zstd_decompress(output.baseAddress, output.count, $0.baseAddress, $0.count, &error)
            }
        }
        try #require(written == known, "\(error.map { String(cString: $0) } ?? "")")
        let directory = SplitProgram.scratch("unzip")
        try Data(archive).write(to: URL(fileURLWithPath: directory + "/set.zip"))
        let listing = try SplitProgram.run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import sys, zipfile
                z = zipfile.ZipFile(sys.argv[1])
                print(' '.join(f'{i.filename}:{i.compress_type}' for i in z.infolist()))
                open(sys.argv[2], 'wb').write(z.read('dwarf'))
                """,
                directory + "/set.zip", directory + "/dwarf",
            ])
        #expect(listing == "dwarf:8\n")  // one entry, deflated
        return contents(directory + "/dwarf")
    }

    @Test func uploadsTheLargerFileOfADebugIdThenFindsItPresent() async throws {
        let program = try SplitProgram.get()
        let debugId = try #require(try ObjectInfo(path: program.full).debugId)
        let mock = try PostHogMock(apiKey: Self.key)
        defer { mock.stop() }
        let directory = try Self.directory(program)
        let first = try await Self.upload([directory, "--json"], mock)
        #expect(first.status == 0, "\(first.error)")
        #expect(
            first.error.contains("cohorly: warning: \(directory)/split.dwo: split DWARF is not supported by PostHog"))
        let summary = try #require(CohorlyValue(json: first.output), "\(first.output)")
        #expect(summary["uploaded"] == 1)
        #expect(summary["already_present"] == 0)
        #expect(summary["skipped"] == 3)
        let files = summary["files"]?.arrayValue ?? []
        func file(_ name: String) async -> CohorlyValue? {
            files.first { $0["path"] == .string(directory + "/" + name) }
        }
        #expect(await file("prog")?["status"] == "uploaded")
        #expect(await file("prog")?["reason"] == .string("debug id \(debugId)"))
        #expect(
            await file("prog.debug")?["reason"]
                == .string("debug id \(debugId) also in \(directory)/prog, which is larger"))
        #expect(await file("prog.stripped")?["reason"] == "no debug info; PostHog symbolicates from DWARF")
        #expect(await file("split.dwo")?["status"] == "skipped")

        let state = mock.with { $0 }
        #expect(state.multipartErrors.isEmpty, "\(state.multipartErrors)")
        #expect(state.startBatches == [[debugId]])
        #expect(state.finished == 1)
        #expect(state.stored.keys.sorted() == [debugId])
        let uploaded = try #require(state.objects.values.first)
        #expect(summary["bytes_sent"]?.intValue == uploaded.count)
        #expect(try Self.unwrap(uploaded) == contents(program.full))
        // The key goes to PostHog's API only, never to the presigned storage URL.
        for request in state.requests {
            #expect(request.authorization == (request.line == "POST /s3" ? nil : "Bearer \(Self.key)"))
        }

        // The same content again: PostHog leaves it out of id_map; nothing is sent, nothing to finish.
        let second = try await Self.upload([directory], mock)
        #expect(second.status == 0, "\(second.error)")
        #expect(second.output.contains("0 uploaded (0 bytes sent), 1 already present, 3 skipped"))
        #expect(second.output.contains("  already present "))
        let after = mock.with { $0 }
        #expect(after.requests.count == state.requests.count + 1)
        #expect(after.finished == 1)
    }

    @Test func aDifferentContentUnderTheSameDebugIdIsShownWithPostHogsCode() async throws {
        let program = try SplitProgram.get()
        let debugId = try #require(try ObjectInfo(path: program.full).debugId)
        let mock = try PostHogMock(apiKey: Self.key)
        defer { mock.stop() }
        mock.with { $0.stored[debugId] = String(repeating: "0", count: 128) }
        let result = try await Self.upload([program.full], mock)
        #expect(result.status == 1)
        #expect(
            result.error.contains(
                "bulk_start_upload answered 400 content_hash_mismatch: Symbol set \(debugId) already exists"),
            "\(result.error)")
        #expect(result.output.contains("0 uploaded (0 bytes sent), 0 already present, 0 skipped, 1 failed"))
        #expect(mock.with { $0.objects.isEmpty })

        // --force replaces it.
        let forced = try await Self.upload([program.full, "--force"], mock)
        #expect(forced.status == 0, "\(forced.error)")
        #expect(forced.output.contains("1 uploaded"))
        #expect(
            mock.with { $0.stored[debugId] } == PostHogMock.sha512(try #require(mock.with { $0.objects.values.first })))
    }

    @Test func everyStepIsRetriedThreeTimes() async throws {
        let program = try SplitProgram.get()
        let mock = try PostHogMock(apiKey: Self.key)
        defer { mock.stop() }
        // Each step fails 3 times with 503 and then works: 4 attempts each, and the upload succeeds.
        mock.with { $0.failures = ["start": 3, "upload": 3, "finish": 3] }
        let recovered = try await Self.upload([program.full], mock)
        #expect(recovered.status == 0, "\(recovered.error)")
        #expect(recovered.output.contains("1 uploaded"))
        let lines = mock.with { $0.requests.map(\.line) }
        #expect(lines.filter { $0.hasSuffix("bulk_start_upload") }.count == 4)
        #expect(lines.filter { $0 == "POST /s3" }.count == 4)
        #expect(lines.filter { $0.hasSuffix("bulk_finish_upload") }.count == 4)

        // A fourth failure is one too many: the file failed, the exit status says so.
        let other = try PostHogMock(apiKey: Self.key)
        defer { other.stop() }
        other.with { $0.failures = ["upload": 4] }
        let failed = try await Self.upload([program.full], other)
        #expect(failed.status == 1)
        #expect(failed.error.contains("the upload of the symbol set answered 503"), "\(failed.error)")
        #expect(other.with { $0.requests.filter { $0.line == "POST /s3" }.count } == 4)
        #expect(other.with { $0.finished } == 0)
    }

    @Test func tenSetsPerBatch() async throws {
        let program = try SplitProgram.get()
        let mock = try PostHogMock(apiKey: Self.key)
        defer { mock.stop() }
        // Twelve copies of the program, each with its own debug id (the build id's first two bytes changed).
        let directory = SplitProgram.scratch("batches")
        let original = contents(program.full)
        let id = stride(from: 0, to: program.buildId.count, by: 2).compactMap {
            UInt8(program.buildId.dropFirst($0).prefix(2), radix: 16)
        }
        let at = try #require(original.firstRange(of: id)).lowerBound
        for index in 0..<12 {
            var copy = original
            copy[at] = UInt8(index)
            copy[at + 1] = 0xee
            try Data(copy).write(to: URL(fileURLWithPath: directory + "/prog\(index)"))
        }
        let result = try await Self.upload([directory], mock)
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("12 uploaded"))
        let state = mock.with { $0 }
        #expect(state.startBatches.map(\.count) == [10, 2])
        #expect(Set(state.startBatches.joined()).count == 12)
        #expect(state.stored.count == 12)
    }

    @Test func theKeyComesFromAFileOrTheEnvironmentAndAWrongOneIsRefused() async throws {
        let program = try SplitProgram.get()
        let mock = try PostHogMock(apiKey: Self.key)
        defer { mock.stop() }
        let file = SplitProgram.scratch("key") + "/key"
        try (Self.key + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let fromFile = try await Self.upload(
            [program.full, "--api-key-file", file], mock, environment: ["POSTHOG_CLI_API_KEY": ""])
        #expect(fromFile.status == 0, "\(fromFile.error)")

        let unreadable = try await Self.upload([program.full, "--api-key-file", file + ".gone"], mock)
        #expect(unreadable.status == 2)
        #expect(unreadable.error.hasPrefix("cohorly: cannot read --api-key-file \(file).gone"), "\(unreadable.error)")
        let empty = try await Self.upload([program.full], mock, environment: ["POSTHOG_CLI_API_KEY": ""])
        #expect(empty.status == 2)
        #expect(empty.error.hasPrefix("cohorly: POSTHOG_CLI_API_KEY is set but empty"))
        let missing = try await CLITests.run(
            ["debug-files", "upload", program.full, "--to", "posthog", "--host", mock.url, "--project-id", "1"],
            environment: [:])
        #expect(missing.status == 2)
        #expect(missing.error.hasPrefix("cohorly: missing the personal API key"))
        let collectorSecret = try await Self.upload([program.full, "--auth-token", "s"], mock)
        #expect(collectorSecret.status == 2)
        #expect(collectorSecret.error.hasPrefix("cohorly: --auth-token is the collector's secret"))
        let keyWithoutPostHog = try await CLITests.run(
            ["debug-files", "upload", program.full, "--release", "r", "--api-key-file", file], environment: [:])
        #expect(keyWithoutPostHog.status == 2)
        #expect(keyWithoutPostHog.error.hasPrefix("cohorly: --api-key-file works with --to posthog only"))
        let noProject = try await Self.upload([program.full], mock, environment: ["POSTHOG_CLI_PROJECT_ID": ""])
        #expect(noProject.status == 2)
        let unknown = try await CLITests.run(
            ["debug-files", "upload", program.full, "--to", "bugsnag"], environment: [:])
        #expect(unknown.status == 2)
        #expect(unknown.error.hasPrefix("cohorly: unknown --to bugsnag (expected cohorly, posthog or sentry)"))

        let wrong = try await Self.upload([program.full], mock, environment: ["POSTHOG_CLI_API_KEY": "phx_wrong"])
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("answered 401 authentication_failed: Invalid personal API key."), "\(wrong.error)")
        #expect(!wrong.error.contains("phx_wrong") && !wrong.output.contains("phx_wrong"))
    }
}
