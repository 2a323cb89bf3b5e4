import CohorlyUpload
import Testing

@Suite("An upload run sends in batches and stops at a refused one")
struct UploadRunBatchTests {
    /// A run of `count` files, each found and not yet sent.
    private func run(of count: Int) -> UploadRun {
        var run = UploadRun()
        run.files = (0..<count).map { DebugFileResult(path: "file\($0)", status: .present) }
        return run
    }

    @Test func everyItemIsSentInBatchesOfTheSize() {
        var run = run(of: 5)
        var batches: [[Int]] = []
        run.sendInBatches(Array(0..<5), of: 2, file: { $0 }, notSent: "not sent") { batch, run in
            batches.append(Array(batch))
            for item in batch { run.files[item].status = .uploaded }
            return nil
        }
        #expect(batches == [[0, 1], [2, 3], [4]])
        #expect(run.fatal == nil)
        #expect(run.files.allSatisfy { $0.status == .uploaded })
    }

    @Test func aRefusedBatchStopsTheRunAndFailsTheFilesAfterIt() {
        var run = run(of: 6)
        var batches: [[Int]] = []
        run.sendInBatches(Array(0..<6), of: 2, file: { $0 }, notSent: "not sent") { batch, run in
            batches.append(Array(batch))
            guard batch.first == 0 else { return "refused" }
            for item in batch { run.files[item].status = .uploaded }
            return nil
        }
        #expect(batches == [[0, 1], [2, 3]])
        #expect(run.fatal == "refused")
        #expect(run.files.map(\.status) == [.uploaded, .uploaded, .present, .present, .failed, .failed])
        #expect(run.files[4].reason == "not sent" && run.files[5].reason == "not sent")
        #expect(run.files[2].reason == nil)
    }

    @Test func aSizeBelowOneSendsOneAtATime() {
        var run = run(of: 2)
        var batches = 0
        run.sendInBatches(Array(0..<2), of: 0, file: { $0 }, notSent: "not sent") { _, _ in
            batches += 1
            return nil
        }
        #expect(batches == 2)
    }
}
