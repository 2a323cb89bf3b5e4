import CohorlyCollector
import CohorlyUpload
import DebugFileFixtures
import Foundation
import Testing

/// Our collector as an upload destination, in process over loopback: the survey's kinds, the check request
/// (`POST /api/debug-files/check`) before and after the files are sent, and a dry run. (The CLI around it:
/// CohorlyCollectorTests' DebugFileUploadCommandTests.)
@Suite struct CollectorUploadTests {
    static let secret = "collector-upload-secret"

    @Test func theSurveyGivesABinaryWithDWARFBothKindsAndItsDebugFileOne() throws {
        let fixture = try SplitProgram.get()
        let surveyed = DebugFileSurvey.survey([fixture.full, fixture.debug])
        #expect(surveyed.map(\.result.path) == [fixture.full, fixture.debug])
        #expect(surveyed.map(\.result.kinds) == [[.executable, .debuginfo], [.debuginfo]])
        #expect(surveyed.map(\.result.buildId) == [fixture.buildId, fixture.buildId])
        let missing = DebugFileSurvey.survey([SplitProgram.scratch("none") + "/none"])
        #expect(missing.map(\.result.status) == [.failed])
        #expect(missing.first?.result.reason == "no such file or directory")
    }

    @Test func aBinaryWithoutDWARFWhoseDebugFileIsNotInTheRunIsAWarning() throws {
        let fixture = try SplitProgram.get()
        var upload = CollectorUpload(host: "http://127.0.0.1:9", release: "", authToken: nil)
        upload.dryRun = true
        let alone = upload.upload([fixture.stripped])
        #expect(alone.files.map(\.status) == [.wouldUpload])
        #expect(alone.warnings == [fixture.stripped + ": " + DebugFileSurvey.noDebugInfoWarning])
        // With its debug file in the same run, the build has DWARF: no warning.
        #expect(upload.upload([fixture.stripped, fixture.debug]).warnings.isEmpty)
    }

    @Test func theCheckNamesWhatIsMissingUntilItIsUploaded() throws {
        let fixture = try SplitProgram.get()
        let collector = try UploadFixture.collector(secret: Self.secret)
        defer { collector.stop() }
        var upload = CollectorUpload(host: collector.baseURL.absoluteString, release: "r@1", authToken: Self.secret)
        upload.retryDelay = 0.01
        let (sha256, size) = try DebugFileSurvey.hash(fixture.debug)
        let item = CollectorUpload.Item(
            path: fixture.debug, kind: .debuginfo, buildId: fixture.buildId, sha256: sha256, size: size)
        #expect(try upload.missing([item]).map(\.sha256) == [sha256])

        var dryRun = upload
        dryRun.dryRun = true
        #expect(dryRun.upload([fixture.debug]).files.map(\.status) == [.wouldUpload])
        #expect(try collector.debugFiles.list().isEmpty)

        let run = upload.upload([fixture.debug])
        #expect(run.succeeded, "\(run.fatal ?? "") \(run.files.map { $0.reason ?? "" })")
        #expect(run.files.map(\.status) == [.uploaded])
        #expect(try upload.missing([item]).isEmpty)
        let stored = try collector.debugFiles.list()
        #expect(stored.map(\.sha256) == [sha256])
        #expect(stored.first?.releases == ["r@1"])
        #expect(upload.upload([fixture.debug]).files.map(\.status) == [.present])
    }

    @Test func aWrongSecretIsRefusedAndNothingIsStored() throws {
        let fixture = try SplitProgram.get()
        let collector = try UploadFixture.collector(secret: Self.secret)
        defer { collector.stop() }
        let run = CollectorUpload(
            host: collector.baseURL.absoluteString, release: "r@1", authToken: "not-the-secret-42"
        )
        .upload([fixture.debug])
        #expect(run.fatal?.contains("refused the check (401)") == true, "\(run.fatal ?? "")")
        #expect(run.fatal?.contains("COHORLY_AUTH_TOKEN") == true, "the hint says where the secret is read from")
        #expect(run.fatal?.contains("not-the-secret-42") == false)
        #expect(run.files.map(\.status) == [.failed])
        #expect(try collector.debugFiles.list().isEmpty)
    }
}
