import Foundation
import Testing

/// A FIFO, socket or device named where a file is expected is refused at once, naming the file.
@Suite struct SpecialFileTests {
    @Test func debugFilesCheckRefusesSpecialFiles() throws {
        let files = try SpecialFiles(name: "check")
        defer { files.remove() }
        for path in [files.fifo, files.socket, files.device] {
            let result = try CLI.run(["debug-files", "check", path])
            #expect(result.status == 1)
            #expect(result.stderr == "cohorly: \(path): not a regular file\n")
        }
        #expect(!files.fifoWasOpened, "the FIFO was opened for reading")
    }

    @Test func symbolicateExeRefusesSpecialFiles() throws {
        let files = try SpecialFiles(name: "exe")
        defer { files.remove() }
        for path in [files.fifo, files.socket, files.device] {
            let result = try CLI.run(["symbolicate", "--exe", path, "0x1000"])
            #expect(result.status == 1)
            #expect(result.stderr == "cohorly: \(path): not a regular file\n")
        }
        #expect(!files.fifoWasOpened, "the FIFO was opened for reading")
    }

    @Test func symbolicateReportRefusesSpecialFiles() throws {
        let files = try SpecialFiles(name: "report")
        defer { files.remove() }
        for path in [files.fifo, files.socket, files.device] {
            let result = try CLI.run(["symbolicate", path])
            #expect(result.status == 1)
            #expect(result.stderr == "cohorly: \(path): not a regular file\n")
        }
        #expect(!files.fifoWasOpened, "the FIFO was opened for reading")
    }
}
