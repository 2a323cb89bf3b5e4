import Foundation
import Testing

/// Numbers from the command line or from files never trap the CLI.
@Suite struct IntegerInputTests {
    /// The last symbol of a binary is sizeless, so it covers every address above it: the offset of the top
    /// address from it is above `Int.max`, and `--json` prints it exactly (it used to trap converting to Int).
    @Test func symbolOffsetsAboveIntMaxArePrintedExactly() throws {
        let fixtures = try CLIFixtures.get()
        let address = "0xfffffffffffffff0"
        let text = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), address])
        #expect(text.status == 0, "\(text.stderr)")
        let offset = try #require(text.stdout.split(separator: "\n").dropFirst().first?.split(separator: " ").last)
        #expect(UInt64(offset).map { $0 > UInt64(Int.max) } == true, "\(text.stdout)")
        let json = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), "--json", address])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains("\"symbol_offset\":\(offset)}"), "\(json.stdout)")
    }
}
