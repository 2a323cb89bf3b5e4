import Foundation
import Testing

@testable import CohorlyCrash

/// A launch never hands over its own crash report: it can only find it while it dies (the handler lets the other
/// threads go before the process ends), and the next launch sends it.
@Suite("A dying launch leaves its own crash report to the next launch")
struct OwnReportTests {
    @Test func theLaunchsOwnReportIsLeftOutOfWhatItHandsOver() throws {
        let directory = try makeTemporaryDirectory("own-report")
        defer { try? FileManager.default.removeItem(at: directory) }
        let own = CrashRecorder.pendingInsertId
        #expect(own.count == 36)
        let earlier = "0001796000000000-4242-0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f.json"
        // The same pid as this process: a container's app is the same pid in every launch; only the id tells.
        let mine = "0001796000000001-\(getpid())-\(own).json"
        for name in [earlier, mine] {
            let written = FileManager.default.createFile(
                atPath: directory.appendingPathComponent(name).path, contents: Data("{}".utf8),
                attributes: [.posixPermissions: 0o600])
            #expect(written)
        }
        let listed = CrashReportStore(directory: directory).pendingReports()
        #expect(Set(listed.map(\.name)) == [earlier, mine])
        let handedOver = CohorlyCrash.earlierLaunchesReports(listed, launchInsertId: own)
        #expect(handedOver.map(\.name) == [earlier])
        // An earlier launch of the same pid keeps its report.
        let samePid = "0001796000000000-\(getpid())-0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f.json"
        let again = CohorlyCrash.earlierLaunchesReports(
            [CrashReportStore.ReportFile(url: directory.appendingPathComponent(samePid))], launchInsertId: own)
        #expect(again.map(\.name) == [samePid])
    }
}
