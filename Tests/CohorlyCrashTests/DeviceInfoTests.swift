import Cohorly
import Foundation
import Testing

@testable import CohorlyCrash

/// The crash context's device facts are read in C (cly_device.c); they must say what the client's
/// AutomaticProperties (Swift) says for its events.
@Suite("Device facts of the crash-time context")
struct DeviceInfoTests {
    /// The fields both sides produce, from the same os-release file.
    static func fields(_ info: DeviceInfo) -> [String: CohorlyValue] {
        CohorlyValue(json: "{" + info.jsonMembers + "}")?.objectValue ?? [:]
    }

    static func compare(osRelease path: String) {
        let device = fields(DeviceInfo(osReleasePath: path))
        let client = AutomaticProperties(osReleasePath: path).values
        for (key, value) in client { #expect(device[key] == value, "\(key)") }
        for key in ["$os_version", "$os_distribution"] {
            #expect((device[key] == nil) == (client[key] == nil), "\(key)")
        }
    }

    @Test func agreesWithTheClientOnThisMachine() {
        Self.compare(osRelease: "/etc/os-release")
        let fields = Self.fields(DeviceInfo.current)
        #expect(fields.count >= 8, "\(DeviceInfo.current.jsonMembers)")
        var names = utsname()
        uname(&names)
        let host = withUnsafeBytes(of: names.nodename) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #expect(fields["$hostname"] == .string(host))
        #expect(fields["$app_name"] == .string(String(CommandLine.arguments[0].split(separator: "/").last ?? "")))
        // This test process started before now and (a test run being short) within the last hour.
        let now = Int(Date().timeIntervalSince1970 * 1000)
        guard case .int(let start)? = fields["$app_start_ms"] else {
            Issue.record("no $app_start_ms in \(fields)")
            return
        }
        #expect(start <= now + 1000 && start > now - 3_600_000, "\(start) vs \(now)")
    }

    @Test func parsesOSReleaseLikeTheClient() throws {
        let directory = try makeTemporaryDirectory("os-release")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases = [
            // quotes, blanks around the value, a comment, a key repeated (the last wins)
            "# comment\nNAME=\"Debian GNU/Linux\"\nVERSION_ID='12'  \nNAME =x\nPRETTY_NAME=\"D 12\"\nNAME=\t\"Later\"\n",
            // no VERSION_ID: BUILD_ID; a value that is one quote; no newline at the end
            "BUILD_ID=rolling\nNAME=\"\nID=arch",
            // neither; an unmatched quote stays; an empty line and a line without '='
            "\nNAME=\"Unmatched\nJUNK\n",
            "",
        ]
        for (index, text) in cases.enumerated() {
            let file = directory.appendingPathComponent("os-release-\(index)")
            try text.write(to: file, atomically: true, encoding: .utf8)
            Self.compare(osRelease: file.path)
        }
        Self.compare(osRelease: directory.appendingPathComponent("missing").path)
    }
}
