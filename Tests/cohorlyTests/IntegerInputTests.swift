import Foundation
import Testing

/// Numbers from the command line or from files never trap the CLI.
@Suite struct IntegerInputTests {
    /// The last symbol of a binary is sizeless; it used to cover every address above it, so the top address got
    /// an offset above `Int.max` (and `--json` trapped converting it to Int). A sizeless symbol now ends at its
    /// section: the top address is unresolved, in text and JSON, without a trap.
    @Test func theTopAddressIsUnresolvedWithoutATrap() throws {
        let fixtures = try CLIFixtures.get()
        let address = "0xfffffffffffffff0"
        let text = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), address])
        #expect(text.status == 1, "\(text.stderr)")
        #expect(text.stdout == address + "\n??\n??:0:0\n\n")
        let json = try CLI.run(["symbolicate", "--exe", fixtures.path("shop"), "--json", address])
        #expect(json.status == 1, "\(json.stderr)")
        #expect(json.stdout == "[{\"address\":\"\(address)\",\"frames\":[]}]\n")
    }
}
