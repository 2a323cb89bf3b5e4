import Foundation
import Testing

/// A FIFO, socket or device named where a file is expected is refused at once, naming the file.
@Suite struct SpecialFileTests {
    /// The commands that read a file named on the command line, with where the file goes.
    static let commands: [(name: String, arguments: @Sendable (String) -> [String])] = [
        ("check", { ["debug-files", "check", $0] }),
        ("exe", { ["symbolicate", "--exe", $0, "0x1000"] }),
        ("report", { ["symbolicate", $0] }),
        ("upload", { ["debug-files", "upload", $0, "--release", "r@1", "--host", "http://127.0.0.1:1"] }),
    ]

    @Test(arguments: 0..<commands.count)
    func specialFilesAreRefusedWithoutBlocking(_ index: Int) throws {
        let command = Self.commands[index]
        let files = try SpecialFiles(name: command.name)
        defer { files.remove() }
        for path in [files.fifo, files.socket, files.device] {
            let result = try CLI.run(command.arguments(path))
            #expect(result.status == 1)
            #expect(result.stderr == "cohorly: \(path): not a regular file\n")
        }
        #expect(!files.fifoWasOpened, "the FIFO was opened for reading")
    }
}
