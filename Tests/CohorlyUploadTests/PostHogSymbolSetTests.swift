import CohorlyPostHogUpload
import DebugFileFixtures
import Foundation
import Testing

/// A PostHog symbol set as the library packs it, unwrapped by independent tools: the header read byte by byte, the
/// payload decompressed by the `zstd` program, the ZIP read (and its CRC-32 checked) by Python's `zipfile`, the
/// content hash recomputed by Python's `hashlib`. (The upload through the API: CohorlyCollectorTests'
/// PostHogUploadTests, against a mock of PostHog.)
@Suite struct PostHogSymbolSetTests {
    @Test func aSetIsTheFileZippedZstdCompressedBehindPostHogsHeader() throws {
        let fixture = try SplitProgram.get()
        let set = try PostHogSymbolSet.pack(path: fixture.debug)
        let header = Array("posthog_error_tracking".utf8)
        #expect(Array(set.bytes.prefix(header.count)) == header)
        // u32le version 2, u32le type 6 (ElfDebugInfo), u8 compression 1 (zstd).
        #expect(Array(set.bytes[header.count..<header.count + 9]) == [2, 0, 0, 0, 6, 0, 0, 0, 1])

        let directory = SplitProgram.scratch("symbol-set")
        try Data(set.bytes[(header.count + 9)...]).write(to: URL(fileURLWithPath: directory + "/set.zst"))
        try Data(set.bytes).write(to: URL(fileURLWithPath: directory + "/set"))
        try SplitProgram.run("/usr/bin/zstd", ["-q", "-d", directory + "/set.zst", "-o", directory + "/set.zip"])
        let answer = try UploadFixture.python(
            """
            import hashlib, sys, zipfile
            z = zipfile.ZipFile(sys.argv[1])
            assert z.testzip() is None
            assert z.namelist() == ['dwarf'], z.namelist()
            same = z.read('dwarf') == open(sys.argv[2], 'rb').read()
            print(same, hashlib.sha512(open(sys.argv[3], 'rb').read()).hexdigest())
            """, [directory + "/set.zip", fixture.debug, directory + "/set"])
        #expect(answer == "True \(set.contentHash)\n")
    }

    @Test func aFileThatCannotBeReadIsNamedInTheError() throws {
        let path = SplitProgram.scratch("missing") + "/prog.debug"
        do {
            _ = try PostHogSymbolSet.pack(path: path)
            Issue.record("a missing file was packed")
        } catch {
            #expect(error.description.contains(path), "\(error)")
        }
    }
}
